/** A page's keyboard shortcuts, listed in a dialog that "?" or its button opens, and Escape closes. */

export interface Shortcut {
  keys: string[];
  does: string;
}

export function ShortcutsHelp({ shortcuts, dialogRef }: { shortcuts: Shortcut[]; dialogRef: { current: HTMLDialogElement | null } }) {
  return (
    <>
      <button type="button" class="button link-button shortcuts-open" aria-keyshortcuts="?" onClick={() => dialogRef.current?.showModal()}>
        Keyboard shortcuts <kbd aria-hidden="true">?</kbd>
      </button>
      <dialog ref={dialogRef} class="card shortcuts" aria-labelledby="shortcuts-title" onClick={(event) => {
        // A click on the backdrop (the dialog itself, outside its content) closes it.
        if (event.target === dialogRef.current) dialogRef.current?.close();
      }}>
        <div class="shortcuts-content">
          <h2 id="shortcuts-title">Keyboard shortcuts</h2>
          <dl>
            {shortcuts.map((shortcut) => (
              <div key={shortcut.does} class="shortcut">
                <dt>
                  {shortcut.keys.map((key, index) => (
                    <span key={key}>
                      {index > 0 && " or "}
                      <kbd>{key}</kbd>
                    </span>
                  ))}
                </dt>
                <dd>{shortcut.does}</dd>
              </div>
            ))}
          </dl>
          <form method="dialog">
            <button type="submit" class="button secondary">
              Close <kbd aria-hidden="true">Esc</kbd>
            </button>
          </form>
        </div>
      </dialog>
    </>
  );
}
