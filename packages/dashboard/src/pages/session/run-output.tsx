/** What a run printed, as it arrives (stderr in its own colour), how it ended, and its rich results. */
import { useEffect, useRef } from 'react';
import { ErrorBanner, useNow } from '../../ui.tsx';
import { showsOnItsOwn } from './result-formats.ts';
import { RichResultView } from './rich-result.tsx';
import type { RunEnd } from './run-drivers.ts';
import type { RunState } from './use-run.ts';

function describeEnd(end: RunEnd): string {
  const how = end.signal ? `ended by ${end.signal}` : end.exitCode !== null ? `exit ${end.exitCode}` : 'stopped';
  const time = end.seconds === null ? '' : ` · ${end.seconds.toFixed(2)} s`;
  return `${how}${time}${end.problem ? ` · ${end.problem}` : ''}`;
}

function Elapsed({ since }: { since: number }) {
  const now = useNow(250);
  return <>{((now - since) / 1000).toFixed(1)} s</>;
}

export function RunOutput({ run }: { run: RunState }) {
  const box = useRef<HTMLPreElement>(null);
  // Follow the newest output, unless the reader scrolled up to read something older.
  const pinned = useRef(true);
  useEffect(() => {
    const element = box.current;
    if (element && pinned.current) element.scrollTop = element.scrollHeight;
  }, [run.output]);
  const results = (run.end?.results ?? []).filter(showsOnItsOwn);
  const live = run.phase !== 'ended';
  return (
    <div className="output" data-run-phase={run.phase}>
      <p className="muted" data-testid="run-status" role="status">
        {live ? (
          <>
            {run.phase === 'stopping' ? 'Stopping' : run.phase === 'starting' ? 'Starting' : 'Running'} · <Elapsed since={run.startedAt} />
            {run.language === 'python' ? ' · Python output appears when the run ends' : ''}
          </>
        ) : run.end ? (
          describeEnd(run.end)
        ) : (
          'Did not run'
        )}
      </p>
      <ErrorBanner error={run.error} />
      {run.output.length > 0 || live ? (
        <pre
          ref={box}
          className="run-output"
          data-testid="run-output"
          role="log"
          aria-label="Output"
          onScroll={(event) => {
            const element = event.currentTarget;
            pinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
          }}
        >
          {run.trimmed ? <span className="muted-output">[earlier output not shown]{'\n'}</span> : null}
          {run.output.map((chunk, index) => (
            <span key={index} className={chunk.stream === 'stderr' ? 'stderr-text' : undefined} data-stream={chunk.stream}>
              {chunk.text}
            </span>
          ))}
        </pre>
      ) : null}
      {run.notes.map((note, index) => (
        <p key={index} className="muted">
          {note}
        </p>
      ))}
      {results.map((result, index) => (
        <RichResultView key={index} result={result} index={index} />
      ))}
    </div>
  );
}
