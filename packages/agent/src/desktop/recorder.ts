/**
 * Screen recordings: ffmpeg grabs the X display (x11grab) into an H.264 MP4 until stopped. One recording at a
 * time (a second would grab the same pixels twice on the same vCPUs). Stopping sends SIGINT, on which ffmpeg
 * finishes the file (writes its index); finished files stay until deleted or the VM ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { kernelRandomBytes } from '../system/kernel-random.ts';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runTool } from './run.ts';
import type { ScreenSize } from './actions.ts';
import type { DesktopRecording } from '../protocol/desktop.ts';

export type Recording = DesktopRecording;

/** A conflict the caller can fix (409): a recording already runs, or none does. */
export class RecordingConflict extends Error {
  override name = 'RecordingConflict';
}

const ID = /^rec_[0-9a-f]{16}$/;
const STOP_TIMEOUT_MS = 60_000;
/**
 * How long `start` waits for ffmpeg's first grabbed frame. Loading ffmpeg and x264 takes seconds under TCG on a
 * busy host: a recording "started" before that would miss the seconds that follow, and a stop that came first
 * would find no frame (a file of 0 s) or an ffmpeg that had not installed its SIGINT handler yet.
 */
const FIRST_FRAME_TIMEOUT_MS = 30_000;

interface Running {
  recording: Recording;
  process: ChildProcess;
  exited: Promise<{ code: number | null; stderr: string }>;
}

export class Recorder {
  private running: Running | null = null;
  private readonly finished = new Map<string, Recording>();

  constructor(
    private readonly directory: string,
    private readonly display: string,
  ) {}

  isValidId(id: string): boolean {
    return ID.test(id);
  }

  pathOf(id: string): string {
    return join(this.directory, `${id}.mp4`);
  }

  async start(screen: ScreenSize, framerate: number): Promise<Recording> {
    if (this.running) throw new RecordingConflict(`recording ${this.running.recording.id} is already running: stop it first`);
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    const id = `rec_${kernelRandomBytes(8).toString('hex')}`;
    const recording: Recording = {
      id,
      status: 'recording',
      started_at: new Date().toISOString(),
      stopped_at: null,
      duration_seconds: null,
      size_bytes: null,
      framerate,
      width: screen.width,
      height: screen.height,
      error: null,
    };
    // ultrafast: the guest's vCPUs are the budget (TCG); yuv420p with even sizes plays everywhere. `-progress`
    // reports the frames encoded so far on stdout, which tells when the recording has really begun.
    const child = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-nostdin',
        '-progress',
        'pipe:1',
        '-stats_period',
        '0.2',
        '-f',
        'x11grab',
        '-draw_mouse',
        '1',
        '-framerate',
        String(framerate),
        '-video_size',
        `${screen.width}x${screen.height}`,
        '-i',
        this.display,
        '-vf',
        'scale=trunc(iw/2)*2:trunc(ih/2)*2',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-pix_fmt',
        'yuv420p',
        '-y',
        this.pathOf(id),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const firstFrame = new Promise<void>((resolve) => {
      let progress = '';
      const onData = (chunk: Buffer) => {
        progress = (progress + chunk.toString('latin1')).slice(-256);
        if (/(?:^|\n)frame=[1-9]/.test(progress)) {
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stdout!.once('close', () => resolve());
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
      child.on('error', (error) => resolve({ code: -1, stderr: error.message }));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    const running: Running = { recording, process: child, exited };
    this.running = running;
    // ffmpeg that dies on its own (bad display, disk full) leaves a failed recording, not a stuck "recording".
    void exited.then(({ code, stderr: output }) => {
      if (this.running !== running) return;
      this.running = null;
      this.finished.set(id, {
        ...recording,
        status: 'failed',
        stopped_at: new Date().toISOString(),
        error: `ffmpeg ended on its own (exit ${code}): ${output.trim().slice(-500)}`,
      });
    });
    // Answer once the first frame is in (or ffmpeg ended, or it is slow beyond reason: the recording stays as it is).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([firstFrame, new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_FRAME_TIMEOUT_MS)))]);
    clearTimeout(timer);
    return this.get(id) ?? recording;
  }

  async stop(): Promise<Recording> {
    const running = this.running;
    if (!running) throw new RecordingConflict('no recording is running');
    this.running = null;
    running.process.kill('SIGINT');
    const timer = setTimeout(() => running.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const { code, stderr } = await running.exited;
    clearTimeout(timer);
    const stoppedAt = new Date().toISOString();
    // ffmpeg answers 255 to the SIGINT it was stopped with, after finishing the file.
    let recording: Recording = { ...running.recording, stopped_at: stoppedAt };
    try {
      const size = (await stat(this.pathOf(recording.id))).size;
      const probed = await runTool([
        'ffprobe',
        '-v',
        'error',
        '-show_entries',
        'format=duration',
        '-of',
        'default=noprint_wrappers=1:nokey=1',
        this.pathOf(recording.id),
      ]);
      const duration = Number(probed.toString('utf8').trim());
      recording = { ...recording, status: 'ready', size_bytes: size, duration_seconds: Number.isFinite(duration) ? duration : null };
    } catch (error) {
      recording = {
        ...recording,
        status: 'failed',
        error: `the recording could not be finished (ffmpeg exit ${code}${stderr ? `: ${stderr.trim().slice(-300)}` : ''}): ${(error as Error).message}`,
      };
    }
    this.finished.set(recording.id, recording);
    return recording;
  }

  current(): Recording | null {
    return this.running?.recording ?? null;
  }

  list(): Recording[] {
    return [...(this.running ? [this.running.recording] : []), ...[...this.finished.values()].reverse()];
  }

  get(id: string): Recording | null {
    return this.running?.recording.id === id ? this.running.recording : (this.finished.get(id) ?? null);
  }

  async delete(id: string): Promise<boolean> {
    if (this.running?.recording.id === id) throw new RecordingConflict(`recording ${id} is running: stop it first`);
    if (!this.finished.delete(id)) return false;
    await rm(this.pathOf(id), { force: true });
    return true;
  }

  /** Files a previous service process left (there is none after a restore; kept for a restarted service). */
  async forgetLeftovers(): Promise<void> {
    for (const name of await readdir(this.directory).catch(() => [])) await rm(join(this.directory, name), { force: true });
  }
}
