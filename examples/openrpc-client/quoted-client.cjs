// An @open-rpc/generator custom component: the generator's own TypeScript client (its static files, hooks
// and template), with one change to the template: each method becomes a quoted class member
// (`public "tick.Holders": TickHolders = …`) instead of a bare one (`public tick.Holders`), which no dotted
// JSON-RPC name survives (open-rpc/generator issue 619, open in 1.22.3). Method names, and so the wire, are
// unchanged: the generated client calls `client["tick.Holders"](…)`.
const { readFileSync } = require('node:fs');
const { template } = require('lodash');
const generator = require('@open-rpc/generator');

const stock = generator.components.defaultClientComponent;
// the stock template's text, read from the installed generator (the only place it is written down)
const source = readFileSync(require.resolve('@open-rpc/generator/build/components/client.js'), 'utf8');
const literal = /var tsTemplate = lodash_1\.template\(("(?:[^"\\]|\\.)*")\);/.exec(source);
if (!literal) throw new Error('quoted-client: the TypeScript client template of @open-rpc/generator was not found');
const bare = 'public <%= method.name %>: ';
const text = JSON.parse(literal[1]);
if (!text.includes(bare)) throw new Error('quoted-client: the method member of the client template was not found');

const hooks = {
  ...stock.hooks,
  templateFiles: {
    typescript: stock.hooks.templateFiles.typescript.map((file) => ({
      ...file,
      template: template(text.replace(bare, 'public "<%= method.name %>": ')),
    })),
  },
};

// the generator loads a custom component with require() and reads its hooks and staticPath
module.exports = { hooks, staticPath: (language) => stock.staticPath(language, 'client') };
