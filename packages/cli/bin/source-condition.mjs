// Module resolve hook: adds the "@sandboxd/source" condition, under which workspace packages export
// their TypeScript sources instead of their built dist/ files.
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes('@sandboxd/source') ? context.conditions : [...context.conditions, '@sandboxd/source'];
  return nextResolve(specifier, { ...context, conditions });
}
