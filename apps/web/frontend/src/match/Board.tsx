/** The board in play: a column of terms and one of definitions, each tile a button. */
import * as G from "./game";
import { tileKey } from "./useMatchGame";

export function Board({
  game,
  busy,
  tileRefs,
  onChoose,
  onTileKey,
}: {
  game: G.Game;
  busy: boolean;
  tileRefs: { current: Map<string, HTMLButtonElement> };
  onChoose: (side: G.Side, id: string) => void;
  onTileKey: (event: KeyboardEvent, side: G.Side, index: number) => void;
}) {
  return (
    <>
      <p class="match-rule meta">
        Pick a term, then its definition (in either order). Arrow keys move between tiles; Enter or Space picks.{" "}
        {game.penaltyRule}
      </p>
      <div class="match-board" aria-busy={busy ? "true" : undefined}>
        {(["term", "definition"] as const).map((side) => (
          <section class={`match-column match-column-${side}`} aria-labelledby={`match-${side}s`} key={side}>
            <h2 id={`match-${side}s`} class="match-column-title">
              {side === "term" ? "Terms" : "Definitions"}
            </h2>
            <ul class="match-tiles">
              {G.tiles(game, side).map((tile, index) => {
                const selected = game.selected[side] === tile.id;
                const wrong = game.wrong?.[side] === tile.id;
                const code = side === "term" && G.isCodeTerm(tile.text);
                const classes = ["match-tile", `match-${side}`];
                if (code) classes.push("is-code");
                if (selected) classes.push("is-selected");
                if (wrong) classes.push("is-wrong");
                if (tile.matched) classes.push("is-matched");
                return (
                  <li key={tile.id}>
                    <button
                      type="button"
                      class={classes.join(" ")}
                      ref={(element) => {
                        if (element) tileRefs.current.set(tileKey(side, tile.id), element);
                        else tileRefs.current.delete(tileKey(side, tile.id));
                      }}
                      aria-pressed={tile.matched ? undefined : selected ? "true" : "false"}
                      disabled={tile.matched}
                      data-tile-id={tile.id}
                      onClick={() => onChoose(side, tile.id)}
                      onKeyDown={(event) => onTileKey(event, side, index)}
                    >
                      <span class="match-tile-text">
                        {side === "term"
                          ? G.codeTermParts(tile.text).map((part, at) => (
                              <span key={at}>
                                {at > 0 && <wbr />}
                                {part}
                              </span>
                            ))
                          : tile.text}
                      </span>
                      {tile.matched && <span class="visually-hidden"> (matched)</span>}
                      {wrong && (
                        <span class="match-tile-penalty" aria-hidden="true">
                          {G.formatPenalty(game.penaltyPerWrongMs)}
                        </span>
                      )}
                    </button>
                  </li>
                );
              })}
            </ul>
          </section>
        ))}
      </div>
      {game.wrong !== null && (
        <p class="match-wrong-note" aria-hidden="true">
          Not a pair: {G.formatPenalty(game.penaltyPerWrongMs)} added.
        </p>
      )}
    </>
  );
}
