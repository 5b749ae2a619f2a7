// The soak's shared stop signal: sleeps end early when the run is over.
export class Clock {
  stopped = false;
  private wake: (() => void)[] = [];
  sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake.push(done);
    });
  }
  stop() {
    this.stopped = true;
    for (const w of this.wake.splice(0)) w();
  }
}
