/**
 * The code editor: CodeMirror 6 with Python and lint markers. Imported only by the exercise page, so
 * only its chunk carries CodeMirror.
 *
 * The app's Content-Security-Policy allows no inline <style>. CodeMirror injects its styles through
 * style-mod, which writes a <style> element into a document but uses a constructed stylesheet
 * (adoptedStyleSheets, outside the CSP's reach) in a shadow root; so the editor lives in a shadow root.
 */
import { indentWithTab } from "@codemirror/commands";
import { HighlightStyle, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { basicSetup } from "codemirror";
import { findingsToDiagnostics, type LintFinding } from "./logic";

export interface CodeEditor {
  getDoc(): string;
  /** Replaces the whole document (one undoable change). */
  setDoc(code: string): void;
  showFindings(findings: readonly LintFinding[]): void;
  clearFindings(): void;
  focus(): void;
  destroy(): void;
}

export interface EditorOptions {
  doc: string;
  /** The accessible name of the editable area. */
  label: string;
  /** How to use the editor from the keyboard, read out with it (ids do not reach into the shadow root). */
  description: string;
  onChange: (doc: string) => void;
  onSubmit: () => void;
}

// Colours from the page's custom properties, which inherit into the shadow root, so the editor
// follows the light or dark theme without being built again.
const theme = EditorView.theme({
  "&": {
    fontSize: "0.9rem",
    backgroundColor: "var(--surface)",
    color: "var(--text)",
    border: "1px solid var(--control-border)",
    borderRadius: "8px",
    maxHeight: "32rem",
  },
  "&.cm-focused": { outline: "3px solid var(--focus)", outlineOffset: "2px" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--text)" },
  "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground": {
    backgroundColor: "var(--selection)",
  },
  ".cm-scroller": { fontFamily: "var(--mono, monospace)", lineHeight: "1.5", overflow: "auto" },
  ".cm-content": { minHeight: "14rem", padding: "0.5rem 0" },
  ".cm-gutters": { backgroundColor: "var(--gutter-bg)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--active-line-gutter)", color: "var(--text)" },
  ".cm-activeLine": { backgroundColor: "var(--active-line)" },
  ".cm-lint-marker": { width: "1em", height: "1em" },
  ".cm-tooltip": {
    fontFamily: "var(--font, sans-serif)",
    maxWidth: "min(30rem, 90vw)",
    backgroundColor: "var(--surface)",
    color: "var(--text)",
    border: "1px solid var(--border)",
  },
  ".cm-diagnostic": { whiteSpace: "pre-wrap" },
  ".cm-diagnostic-warning": { borderLeftColor: "var(--hard)" },
  ".cm-lintRange-warning": { backgroundColor: "var(--warning-bg)" },
});

// The code's colours, also custom properties: CodeMirror's default style is for light pages only.
const codeColours = syntaxHighlighting(
  HighlightStyle.define([
    { tag: [tags.keyword, tags.operatorKeyword, tags.controlKeyword, tags.definitionKeyword], color: "var(--code-keyword)" },
    { tag: [tags.string, tags.special(tags.string)], color: "var(--code-string)" },
    { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "var(--code-number)" },
    { tag: tags.comment, color: "var(--code-comment)", fontStyle: "italic" },
    { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: "var(--code-function)" },
    { tag: [tags.definition(tags.variableName), tags.className], color: "var(--code-definition)" },
    { tag: tags.invalid, color: "var(--again)" },
  ]),
);

/**
 * Typing over a selection is done here rather than by the browser: Chromium's own editing, when it
 * replaces a selection, writes style="" attributes into the editor's DOM (to keep the look of the
 * lines it merges), which the CSP refuses and reports. The input handlers (bracket closing,
 * completion) still see the text, as they would after the browser's edit.
 */
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    const text = event.data;
    if (event.inputType !== "insertText" || !text || view.composing || view.state.selection.main.empty) return false;
    event.preventDefault();
    const { from, to } = view.state.selection.main;
    const insert = () => view.state.update(view.state.replaceSelection(text), { userEvent: "input.type", scrollIntoView: true });
    if (!view.state.facet(EditorView.inputHandler).some((handler) => handler(view, from, to, text, insert))) {
      view.dispatch(insert());
    }
    return true;
  },
});

export function createEditor(host: HTMLElement, options: EditorOptions): CodeEditor {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const mount = document.createElement("div");
  const description = document.createElement("p");
  description.id = "code-editor-description";
  description.hidden = true;
  description.textContent = options.description;
  shadow.replaceChildren(description, mount);

  const submit = () => {
    options.onSubmit();
    return true;
  };
  const state = EditorState.create({
    doc: options.doc,
    extensions: [
      // Mod-Enter first, before basicSetup's own binding (insert a blank line).
      Prec.highest(keymap.of([{ key: "Mod-Enter", run: submit }])),
      basicSetup,
      // Tab indents; Escape then Tab (or Ctrl-M) leaves the editor, as the hint beside it says.
      keymap.of([indentWithTab]),
      python(),
      indentUnit.of("    "),
      typeOverSelection,
      lintGutter(),
      theme,
      codeColours,
      EditorView.contentAttributes.of({
        "aria-label": options.label,
        "aria-describedby": description.id,
        "aria-multiline": "true",
        // Already in the tab order as an editable region; said outright so checkers of scrollable
        // regions (axe) see the scroller holds something focusable.
        tabindex: "0",
      }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) options.onChange(update.state.doc.toString());
      }),
    ],
  });
  const view = new EditorView({ state, parent: mount, root: shadow });

  return {
    getDoc: () => view.state.doc.toString(),
    setDoc(code) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
    },
    showFindings(findings) {
      view.dispatch(setDiagnostics(view.state, findingsToDiagnostics(view.state.doc, findings)));
    },
    clearFindings() {
      view.dispatch(setDiagnostics(view.state, []));
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
