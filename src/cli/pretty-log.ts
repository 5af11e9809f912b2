// The request log on a terminal: pino-pretty, one short line per record
// (time, level, message and fields), instead of JSON lines meant for a
// log collector.

import pretty from 'pino-pretty';

export function prettyLog(): NodeJS.WritableStream {
  return pretty({
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    destination: 1,
    sync: true,
  });
}
