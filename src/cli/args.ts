// Parsers of the command line's numeric flags, shared by the commands: each refuses a bad value
// with a message that says what the flag takes (commander prints it and exits 1).

import { InvalidArgumentError } from 'commander';

export function positiveNumber(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive number.`);
    return n;
  };
}

export function port(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be an integer from 0 to 65535.');
  return n;
}

export function workersArg(v: string) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 256) throw new InvalidArgumentError('workers must be an integer from 0 to 256 (1 or unset = a single process, 0 = one per core).');
  return n;
}

export function integer(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer.`);
    return n;
  };
}
