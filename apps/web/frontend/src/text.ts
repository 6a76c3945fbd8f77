/** Splits authored plain text into paragraphs, lists and inline spans; never produces HTML. */

export type TextBlock = { kind: "paragraph"; text: string } | { kind: "list"; items: string[] };
export interface InlinePart {
  text: string;
  code?: boolean;
  strong?: boolean;
}

const BULLET = /^\s*(?:[-*•]|\d+[.)])\s+/;

/** Blank lines separate blocks; hard-wrapped lines inside a paragraph join with a space. */
export function parseBlocks(source: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  for (const chunk of source.replace(/\r\n?/g, "\n").split(/\n\s*\n/)) {
    const lines = chunk.split("\n").filter((line) => line.trim() !== "");
    if (lines.length === 0) continue;
    if (lines.every((line, index) => BULLET.test(line) || (index > 0 && /^\s+\S/.test(line)))) {
      const items: string[] = [];
      for (const line of lines) {
        if (BULLET.test(line)) items.push(line.replace(BULLET, "").trim());
        else items[items.length - 1] += ` ${line.trim()}`;
      }
      blocks.push({ kind: "list", items });
    } else {
      blocks.push({ kind: "paragraph", text: lines.map((line) => line.trim()).join(" ") });
    }
  }
  return blocks;
}

/** `code` and **strong** spans; anything else stays literal text. */
export function parseInline(text: string): InlinePart[] {
  const parts: InlinePart[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match.index > last) parts.push({ text: text.slice(last, match.index) });
    if (match[1] !== undefined) parts.push({ text: match[1], code: true });
    else parts.push({ text: match[2] ?? "", strong: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last) });
  return parts;
}

/**
 * Text of an HTML fragment, keeping paragraph and line breaks. DOMParser builds an inert document
 * (no scripts run, nothing loads), and only its text is used.
 */
export function htmlToText(html: string): string {
  if (typeof DOMParser === "undefined") return html.replace(/<[^>]*>/g, "");
  const doc = new DOMParser().parseFromString(html, "text/html");
  doc.querySelectorAll("br").forEach((br) => br.replaceWith("\n"));
  doc.querySelectorAll("p, div, ul, ol, h1, h2, h3, h4, h5, h6, pre, blockquote").forEach((element) => {
    element.append("\n\n");
  });
  doc.querySelectorAll("li").forEach((li) => {
    li.prepend("\n- ");
  });
  return (doc.body.textContent ?? "").replace(/\n{3,}/g, "\n\n").trim();
}
