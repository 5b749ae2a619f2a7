import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { YogaServerOptions } from 'graphql-yoga';

// yoga's GraphiQL renderer inlines a 9 MB bundle, and a module's source stays in the heap of the isolate that
// loaded it for as long as the process lives (measured under the soak: 29 MB, its source text and an
// internalized copy). The page is rendered once and kept compressed (src/server/graphiql.ts), so it is
// rendered in a short-lived worker thread whose heap is released when it exits.

type Render = NonNullable<YogaServerOptions<object, object>['renderGraphiQL']>;

const modulePath = createRequire(import.meta.url).resolve('@graphql-yoga/render-graphiql');

// CommonJS (an eval'd worker is one): the renderer's absolute path, so that no resolution depends on the cwd
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.postMessage(require(workerData.modulePath).renderGraphiQL(workerData.options));
`;

/** GraphiQL's page as yoga's renderer writes it, rendered in a worker thread of its own. */
export const renderGraphiQLApart = (options?: Parameters<Render>[0]): Promise<string> =>
  new Promise<string>((resolve, reject) => {
    // the page embeds the options as JSON: what JSON does not carry, the page would not see either
    const plain: unknown = options === undefined ? undefined : JSON.parse(JSON.stringify(options));
    const worker = new Worker(workerSource, {
      eval: true,
      workerData: { modulePath, options: plain },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    let page: string | undefined;
    worker.once('message', (html: string) => { page = html; });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (page !== undefined) resolve(page);
      else reject(new Error(`GraphiQL's renderer exited with code ${code} before answering`));
    });
  });
