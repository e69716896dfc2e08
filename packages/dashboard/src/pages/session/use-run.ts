/** The Run panel's state: one run at a time, its output as it arrives, its end, and Stop. */
import { useCallback, useEffect, useReducer, useRef } from 'react';
import { appendOutput, type OutputChunk, type OutputStream } from './output-buffer.ts';
import { startRun, type RunEnd, type RunHandle, type RunLanguage } from './run-drivers.ts';

export interface RunState {
  language: RunLanguage;
  phase: 'starting' | 'running' | 'stopping' | 'ended';
  /** Date.now() when Run was pressed, for the time shown while it runs. */
  startedAt: number;
  output: OutputChunk[];
  /** Older output was dropped from the page to keep it responsive. */
  trimmed: boolean;
  notes: string[];
  end: RunEnd | null;
  error: unknown;
}

type Action =
  | { type: 'start'; language: RunLanguage; at: number }
  | { type: 'running' }
  | { type: 'output'; stream: OutputStream; text: string }
  | { type: 'note'; text: string }
  | { type: 'stopping' }
  | { type: 'stop-failed'; error: unknown }
  | { type: 'end'; end: RunEnd }
  | { type: 'fail'; error: unknown };

function reduce(state: RunState | null, action: Action): RunState | null {
  if (action.type === 'start')
    return { language: action.language, phase: 'starting', startedAt: action.at, output: [], trimmed: false, notes: [], end: null, error: null };
  if (!state) return state;
  switch (action.type) {
    case 'running':
      return state.phase === 'starting' ? { ...state, phase: 'running' } : state;
    case 'output':
      return appendOutput(state, action.stream, action.text);
    case 'note':
      return { ...state, notes: [...state.notes, action.text] };
    case 'stopping':
      return state.phase === 'ended' ? state : { ...state, phase: 'stopping', error: null };
    case 'stop-failed':
      return state.phase === 'ended' ? state : { ...state, phase: 'running', error: action.error };
    case 'end':
      return { ...state, phase: 'ended', end: action.end };
    case 'fail':
      return { ...state, phase: 'ended', error: action.error };
  }
}

/** Runs code in the session's VM; `onEnded` is called after each run ends (to refresh what it may have changed). */
export function useRun(
  sessionId: string,
  onEnded: () => void,
): { run: RunState | null; start: (language: RunLanguage, code: string) => void; stop: () => void } {
  const [run, dispatch] = useReducer(reduce, null);
  const handle = useRef<RunHandle | null>(null);
  /** Which run the listener reports for: a report of an earlier one (or after the page went) is dropped. */
  const generation = useRef(0);
  const ended = useRef(onEnded);
  ended.current = onEnded;

  useEffect(
    () => () => {
      generation.current += 1;
      handle.current?.detach();
    },
    [sessionId],
  );

  const start = useCallback(
    (language: RunLanguage, code: string) => {
      handle.current?.detach();
      const mine = (generation.current += 1);
      const live = () => generation.current === mine;
      dispatch({ type: 'start', language, at: Date.now() });
      startRun(sessionId, language, code, {
        output: (stream, text) => live() && dispatch({ type: 'output', stream, text }),
        note: (text) => live() && dispatch({ type: 'note', text }),
        end: (end) => {
          if (!live()) return;
          dispatch({ type: 'end', end });
          ended.current();
        },
        fail: (error) => live() && dispatch({ type: 'fail', error }),
      }).then(
        (started) => {
          if (!live()) return started.detach();
          handle.current = started;
          dispatch({ type: 'running' });
        },
        (error: unknown) => live() && dispatch({ type: 'fail', error }),
      );
    },
    [sessionId],
  );

  const stop = useCallback(() => {
    const current = handle.current;
    if (!current) return;
    dispatch({ type: 'stopping' });
    current.stop().catch((error: unknown) => dispatch({ type: 'stop-failed', error }));
  }, []);

  return { run, start, stop };
}
