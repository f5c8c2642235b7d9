// One change at a time: state that is replaced whole (a list sent to the host, stored
// schedules) must be changed in the order asked, each change after the one before has
// settled, whether it succeeded or not.

/**
 * A queue of changes: the function it returns runs `change` after every change given to
 * it before has settled, and returns `change`'s own promise.
 * @returns {<T>(change: () => Promise<T> | T) => Promise<T>}
 */
export function oneAtATime() {
  let queue = Promise.resolve();
  return (change) => {
    const done = queue.then(change);
    queue = done.catch(() => {});
    return done;
  };
}
