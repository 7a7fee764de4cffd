/**
 * A clock a test moves by hand, for expiries, lockouts and rotation.
 *
 * @module
 */

/** A settable clock. */
export interface FakeClock {
  now: () => number;
  advance(ms: number): void;
}

/** A clock that starts at the real time and moves only when told. */
export function fakeClock(start = Date.now()): FakeClock {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}
