/** Authored text as safe markup: paragraphs, bullet lists and `code` spans, always as text nodes; an
 * HTML card's sanitized markup, images and sounds as elements built here, never as HTML. */
import { h, type ComponentChildren, type VNode } from "preact";
import { cardMediaSource, mediaLabel, parseBlocks, parseInline } from "../text";

function Inline({ text }: { text: string }): ComponentChildren {
  return parseInline(text).map((part, index) =>
    part.code ? <code key={index}>{part.text}</code> : part.strong ? <strong key={index}>{part.text}</strong> : part.text,
  );
}

export function RichText({ text, format = "text" }: { text: string; format?: string }) {
  if (format === "html") return <div class="card-html">{htmlElements(text)}</div>;
  const source = text;
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

// The server keeps an HTML card to this allow-list (apps.content.card_markup); it is applied again here,
// so a stored value that slipped past it still renders only these, with no attributes but the media's.
const FORMATTING = new Set(["b", "i", "u", "em", "strong", "sub", "sup", "p", "div", "span", "ul", "ol", "li", "code", "pre"]);

function htmlElements(html: string): ComponentChildren {
  if (typeof DOMParser === "undefined") return html.replace(/<[^>]*>/g, "");
  // An inert document: no script runs and nothing loads while it is parsed.
  const doc = new DOMParser().parseFromString(html, "text/html");
  return Array.from(doc.body.childNodes, (node, index) => element(node, index));
}

function element(node: Node, key: number): ComponentChildren {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent;
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const source = node as Element;
  const tag = source.tagName.toLowerCase();
  const children = Array.from(source.childNodes, (child, index) => element(child, index));
  if (tag === "br") return <br key={key} />;
  if (tag === "img") return image(source, key);
  if (tag === "audio") return sound(source, key);
  if (FORMATTING.has(tag)) return h(tag, { key }, children) as VNode;
  return children;
}

function image(source: Element, key: number): ComponentChildren {
  const src = cardMediaSource(source.getAttribute("src"));
  if (src === null) return null;
  return <img key={key} class="card-image" src={src} alt={mediaLabel("image", src, source.getAttribute("alt"))} loading="lazy" decoding="async" />;
}

function sound(source: Element, key: number): ComponentChildren {
  const src = cardMediaSource(source.getAttribute("src"));
  if (src === null) return null;
  const label = mediaLabel("sound", src);
  return (
    <span key={key} class="card-sound">
      <audio controls preload="none" src={src} aria-label={label} />
      <span class="card-sound-name">{label}</span>
    </span>
  );
}
