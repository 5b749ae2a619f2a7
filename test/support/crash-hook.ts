// Test-only: loaded into the real gateway process with `node --import tsx --import ./test/support/crash-hook.ts`
// by test/process/crash.test.ts. It is not part of src/ and nothing imports it, so no request can reach it.
// On SIGUSR2 the process fails the way a bug would: CRASH_HOOK=exception throws from an event callback,
// CRASH_HOOK=rejection leaves a rejected promise unhandled.
process.on('SIGUSR2', () => {
  if (process.env.CRASH_HOOK === 'rejection') void Promise.reject(new Error('forced rejection (test hook)'));
  else throw new Error('forced exception (test hook)');
});
