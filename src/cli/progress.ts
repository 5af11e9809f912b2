// Progress for long work: a self-updating line on a terminal, one line per
// step otherwise (logs and CI).

export function progressReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  let last = '';
  return (step: string, done: number, total: number) => {
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const width = 20;
    const filled = total > 0 ? Math.round((done / total) * width) : 0;
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
    const line = `${label} ${bar} ${done}/${total} ${step} (${secs}s)`;
    if (stream.isTTY) {
      stream.write(`\r\x1b[2K${line}${step === 'done' ? '\n' : ''}`);
    } else if (step !== last) {
      stream.write(`${line}\n`);
    }
    last = step;
  };
}
