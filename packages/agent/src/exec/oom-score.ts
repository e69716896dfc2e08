/**
 * The guest's OOM killer must never pick the agent (without it the VM is lost), so guest-init starts it with
 * `oom_score_adj` -1000. Children inherit that at fork, and user programs must stay fair game: the agent sets
 * its own score to 0 for the moment of a synchronous spawn and back afterwards, as it does with cgroups
 * (`ExecCgroup.spawnInside`). Lowering a score needs CAP_SYS_RESOURCE, which the agent has in the VM (root).
 */
import { readFileSync, writeFileSync } from 'node:fs';

const SCORE_PATH = '/proc/self/oom_score_adj';
const USER_SCORE = '0';

let agentScore: string | null | undefined;

/** The agent's own score, read once; null when it is already a user program's (or cannot be changed). */
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

/** Runs `spawnChild` (a synchronous fork) so that the child starts with a user program's OOM score. */
export function asUserProgram<T>(spawnChild: () => T): T {
  const score = protectedScore();
  if (score === null) return spawnChild();
  writeFileSync(SCORE_PATH, USER_SCORE);
  try {
    return spawnChild();
  } finally {
    writeFileSync(SCORE_PATH, score);
  }
}
