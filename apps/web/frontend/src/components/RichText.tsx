/** Authored text as safe markup: paragraphs, bullet lists and `code` spans, always as text nodes. */
import type { ComponentChildren } from "preact";
import { htmlToText, parseBlocks, parseInline } from "../text";

function Inline({ text }: { text: string }): ComponentChildren {
  return parseInline(text).map((part, index) =>
    part.code ? <code key={index}>{part.text}</code> : part.strong ? <strong key={index}>{part.text}</strong> : part.text,
  );
}

export function RichText({ text, format = "text" }: { text: string; format?: string }) {
  const source = format === "html" ? htmlToText(text) : text;
  return (
    <>
      {parseBlocks(source).map((block, index) =>
        block.kind === "list" ? (
          <ul key={index}>
            {block.items.map((item, itemIndex) => (
              <li key={itemIndex}>
                <Inline text={item} />
              </li>
            ))}
          </ul>
        ) : (
          <p key={index}>
            <Inline text={block.text} />
          </p>
        ),
      )}
    </>
  );
}
