/**
 * The fields of one secret in a form (name, write-only value, allowed hosts, injection point) and reading them
 * back: the secret to send, and clearing every value once the form is submitted.
 */
import { useState } from 'react';
import type { Schemas } from '../../api.ts';

type VaultSecretInput = Schemas['VaultSecretInput'];
type Injection = Schemas['VaultSecretInjection'];

const SECRET_NAME_PATTERN = '[A-Za-z_][A-Za-z0-9_]{0,127}';

/** `a.example.com, *.example.org` or one a line → the list of hosts. */
export function parseHosts(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((host) => host.trim())
    .filter(Boolean);
}

/** Empties every value field of a form (the value is never kept in the page after a submit). */
export function clearValues(form: HTMLFormElement): void {
  for (const input of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) input.value = '';
}

/**
 * The fields of one secret: name, value (write-only), allowed hosts, and where it is injected (`keep`: a choice to
 * leave a rotated secret's injection point as it is). `prefix` keeps the ids unique.
 */
export function SecretFields({
  prefix,
  legend,
  required = false,
  keep = false,
  onRemove,
}: {
  prefix: string;
  legend?: string;
  required?: boolean;
  keep?: boolean;
  onRemove?: () => void;
}) {
  const [type, setType] = useState<string>(keep ? '' : 'bearer');
  return (
    <fieldset className="secret-fields">
      {legend ? <legend>{legend}</legend> : null}
      <label htmlFor={`${prefix}-name`}>Secret name</label>
      <input
        id={`${prefix}-name`}
        name={`${prefix}-name`}
        required={required}
        pattern={SECRET_NAME_PATTERN}
        maxLength={128}
        placeholder="OPENAI_API_KEY"
        autoComplete="off"
        spellCheck={false}
      />
      <label htmlFor={`${prefix}-value`}>Value</label>
      <input id={`${prefix}-value`} name={`${prefix}-value`} required={required} type="password" autoComplete="off" />
      <label htmlFor={`${prefix}-hosts`}>Allowed hosts</label>
      <textarea id={`${prefix}-hosts`} name={`${prefix}-hosts`} required={required} rows={2} placeholder="api.openai.com, *.example.com" spellCheck={false} />
      <label htmlFor={`${prefix}-inject`}>Injected as</label>
      <select id={`${prefix}-inject`} name={`${prefix}-inject`} value={type} onChange={(event) => setType(event.target.value)}>
        {keep ? <option value="">(as it is; Authorization: Bearer for a new secret)</option> : null}
        <option value="bearer">Authorization: Bearer</option>
        <option value="basic">Authorization: Basic (user or password)</option>
        <option value="header">A header of its own</option>
      </select>
      {type === 'header' ? (
        <>
          <label htmlFor={`${prefix}-header`}>Header name</label>
          <input id={`${prefix}-header`} name={`${prefix}-header`} required maxLength={64} placeholder="X-Api-Key" autoComplete="off" spellCheck={false} />
          <label htmlFor={`${prefix}-header-prefix`}>Value prefix</label>
          <input
            id={`${prefix}-header-prefix`}
            name={`${prefix}-header-prefix`}
            maxLength={64}
            placeholder='"token " for GitHub; empty for most'
            autoComplete="off"
            spellCheck={false}
          />
        </>
      ) : null}
      <p className="muted">The value is sent only there, never in a URL or another header; what the host answers is masked.</p>
      {onRemove ? (
        <button type="button" onClick={onRemove}>
          Remove this secret
        </button>
      ) : null}
    </fieldset>
  );
}

export function readSecret(form: FormData, prefix: string): VaultSecretInput | null {
  const name = String(form.get(`${prefix}-name`) ?? '').trim();
  const value = String(form.get(`${prefix}-value`) ?? '');
  const hosts = parseHosts(String(form.get(`${prefix}-hosts`) ?? ''));
  if (!name && !value && hosts.length === 0) return null;
  const type = String(form.get(`${prefix}-inject`) ?? '');
  const inject: Injection | null =
    type === 'bearer' || type === 'basic'
      ? { type }
      : type === 'header'
        ? { type: 'header', name: String(form.get(`${prefix}-header`) ?? '').trim(), prefix: String(form.get(`${prefix}-header-prefix`) ?? '') }
        : null;
  return { name, value, allowed_hosts: hosts, ...(inject ? { inject } : {}) };
}
