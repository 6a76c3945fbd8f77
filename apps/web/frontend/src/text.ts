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

/** Where a card's media is served (apps.content.card_markup.MEDIA_PATH_PREFIX): nothing else is loaded. */
const MEDIA_PREFIX = "/media/";

/** A card's image or sound source when it is this site's media, else null (then nothing is loaded). */
export function cardMediaSource(src: string | null): string | null {
  if (src === null || !src.startsWith(MEDIA_PREFIX) || src.includes("//") || src.includes("\\")) return null;
  return src;
}

/** The file's own name from a media URL (/media/<sha256>/<name>), for a text alternative. */
export function mediaName(src: string): string {
  const last = src.split("/").pop() ?? "";
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** What a screen reader hears for an image with no alt text of its own, or names a sound: never the hash. */
export function mediaLabel(kind: "image" | "sound", src: string, alt: string | null = null): string {
  const own = alt?.trim();
  if (own) return own;
  const name = mediaName(src).replace(/\.[a-z0-9]{2,5}$/i, "").replace(/[-_]+/g, " ").trim();
  const noun = kind === "image" ? "Image" : "Sound";
  return name ? `${noun}: ${name}` : noun;
}
