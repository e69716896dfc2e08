/**
 * One rich result of a Python run (a matplotlib figure, a pandas table, display data), shown so that nothing the
 * guest made runs in the console's origin: images only as PNG or JPEG data URLs whose base64 and magic bytes were
 * checked; HTML and SVG only inside an iframe with an empty `sandbox` (no scripts, no forms, an opaque origin) whose
 * own policy also forbids loading anything; everything else as text, which React escapes.
 */
import type { RichResult } from '../../api.ts';
import { imageDataUrl, resultText, sandboxDocument } from './result-formats.ts';

export function RichResultView({ result, index }: { result: RichResult; index: number }) {
  const label = `Result ${index + 1}`;
  const png = imageDataUrl('png', result.png);
  const jpeg = png ? null : imageDataUrl('jpeg', result.jpeg);
  let body;
  if (png || jpeg) body = <img src={(png ?? jpeg)!} alt={`${label}: ${png ? 'PNG' : 'JPEG'} image${result.text ? ` (${result.text})` : ''}`} />;
  else if (result.html || result.svg)
    body = (
      <div className="result-frame">
        <iframe
          sandbox=""
          referrerPolicy="no-referrer"
          title={`${label}: ${result.html ? 'HTML' : 'SVG'}`}
          srcDoc={sandboxDocument((result.html ?? result.svg)!)}
        />
      </div>
    );
  else body = <pre>{resultText(result) ?? '(a result with no format the console shows)'}</pre>;
  return (
    <figure className="rich-result" data-testid="rich-result">
      {body}
      <figcaption className="muted">
        {label}
        {result.is_main_result ? ' · the value of the last expression' : ''}
      </figcaption>
    </figure>
  );
}
