import type { Plugin } from 'graphql-yoga';
import type { BudgetContext } from '../result-budget.js';

/** /graphql: an operation over its budget answers with the one error, without the partial data. */
export function resultBudgetPlugin(): Plugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          const exceeded = (args.contextValue as Partial<BudgetContext>).budget?.exceeded;
          if (exceeded && !('next' in result)) setResult({ errors: [exceeded] });
        },
      };
    },
  };
}
