// npm run db:seed — migrates, then loads the demo dataset into an empty read model.
process.argv.push('--seed');
await import('./migrate.js');
