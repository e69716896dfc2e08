/**
 * How the agent starts user code (exec'd programs, Python kernels, terminal relays). Linux gives a forked child
 * its parent's cgroup and `oom_score_adj`, and Node's `spawn` forks synchronously, so the agent takes on what
 * the child should have for the moment of the fork and returns to its own right after. No wrapper process is
 * needed: an `sh` that set these before exec'ing the program cost ~50 ms per exec under TCG.
 *
 * - OOM score: guest-init starts the agent at -1000, so the guest's OOM killer never ends it (the VM would be
 *   lost); user programs start at 0. Lowering the score back needs CAP_SYS_RESOURCE, which the agent has in a
 *   VM (root); where its own score is already 0 (tests on a host) nothing changes.
 * - cgroup: the child is born in its program's group (`user-cgroups.ts`), so nothing it forks escapes the
 *   accounting, the limits or `cgroup.kill`. The agent's other threads move along for that moment (microseconds
 *   of CPU figures; the task limit is not checked on a move, only on a fork).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { UserCgroup } from './user-cgroups.ts';

const SCORE_PATH = '/proc/self/oom_score_adj';
const USER_SCORE = '0';

let agentScore: string | null | undefined;

/** The agent's own score, read once; null when it is already a user program's (or cannot be read). */
function protectedScore(): string | null {
  if (agentScore === undefined) {
    try {
      const score = readFileSync(SCORE_PATH, 'utf8').trim();
      agentScore = score === USER_SCORE ? null : score;
    } catch {
      agentScore = null;
    }
  }
  return agentScore;
}

/**
 * Runs `spawnChild` (a synchronous fork, as `child_process.spawn` does) so that the child starts with a user
 * program's OOM score and, when `cgroup` is given, inside that group.
 */
export function startUserProgram<T>(spawnChild: () => T, cgroup: UserCgroup | null = null): T {
  const score = protectedScore();
  if (score !== null) writeFileSync(SCORE_PATH, USER_SCORE);
  try {
    if (cgroup) writeFileSync(cgroup.procsPath, '0');
    try {
      return spawnChild();
    } finally {
      // Must not fail: an agent left in the group would die with the execution's cgroup.kill.
      if (cgroup) writeFileSync(cgroup.homeProcsPath, '0');
    }
  } finally {
    if (score !== null) writeFileSync(SCORE_PATH, score);
  }
}
