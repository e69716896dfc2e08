/** The agent's own version (kept equal to package.json's by a test; the bundle has no package.json). */
export const AGENT_VERSION = '0.3.0';
