/** Paths in the VM as the Files panel makes them from what is shown and typed. */

/** `name` in `dir`; a name that starts with "/" is a path of its own (rename moves there). */
export function pathIn(dir: string, name: string): string {
  if (name.startsWith('/')) return name;
  return `${dir.replace(/\/+$/, '')}/${name}`;
}

/** The directory above `dir` ("/" for "/"). */
export function parentOf(dir: string): string {
  return dir.replace(/\/+$/, '').replace(/\/[^/]*$/, '') || '/';
}
