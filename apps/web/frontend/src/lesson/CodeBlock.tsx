/** A lesson's code example: coloured, and copied whole with one press. */
import { useState } from "preact/hooks";
import { codeSpans } from "./highlight";

export function CodeBlock({ code, language, heading }: { code: string; language: string; heading: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(code);
      setCopied("yes");
    } catch {
      setCopied("no");
    }
  };
  return (
    <figure class="block code-block">
      <div class="code-block-bar">
        {heading ? <figcaption>{heading}</figcaption> : <span />}
        <button type="button" class="button secondary code-copy" onClick={() => void copy()}>
          Copy<span class="visually-hidden"> the code{heading ? `: ${heading}` : ""}</span>
        </button>
      </div>
      <pre tabIndex={0} aria-label={heading || `${language || "Code"} example`}>
        <code class={language ? `language-${language}` : undefined}>
          {codeSpans(code, language).map((span, index) =>
            span.kind ? (
              <span key={index} class={span.kind}>
                {span.text}
              </span>
            ) : (
              span.text
            ),
          )}
        </code>
      </pre>
      <p class="code-copy-status" role="status">
        {copied === "yes" ? "Copied." : copied === "no" ? "This browser did not allow copying: select the code instead." : ""}
      </p>
    </figure>
  );
}
