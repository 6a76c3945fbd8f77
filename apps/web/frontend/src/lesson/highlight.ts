/** Python code split into spans for colouring, by the same Lezer parser the exercise editor uses; pure. */
import { highlightTree, tagHighlighter, tags } from "@lezer/highlight";
import { parser } from "@lezer/python";

export interface CodeSpan {
  text: string;
  /** A class of app.css's code colours (tok-keyword, ...), or none for plain text. */
  kind: string | null;
}

const HIGHLIGHTER = tagHighlighter([
  { tag: [tags.keyword, tags.operatorKeyword, tags.controlKeyword, tags.definitionKeyword, tags.moduleKeyword], class: "tok-keyword" },
  { tag: [tags.string, tags.special(tags.string)], class: "tok-string" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], class: "tok-number" },
  { tag: tags.comment, class: "tok-comment" },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], class: "tok-function" },
  { tag: [tags.definition(tags.variableName), tags.className], class: "tok-definition" },
]);

/** The code as spans that join back to it exactly; languages other than Python come back as one plain span. */
export function codeSpans(code: string, language: string): CodeSpan[] {
  if (language.toLowerCase() !== "python") return [{ text: code, kind: null }];
  const spans: CodeSpan[] = [];
  let at = 0;
  highlightTree(parser.parse(code), HIGHLIGHTER, (from, to, classes) => {
    if (from > at) spans.push({ text: code.slice(at, from), kind: null });
    spans.push({ text: code.slice(from, to), kind: classes });
    at = to;
  });
  if (at < code.length) spans.push({ text: code.slice(at), kind: null });
  return spans;
}
