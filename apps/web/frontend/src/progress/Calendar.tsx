/** The year of reviews as a calendar of squares (SVG drawn from data), and each deck's mastery as bars. */
import { heatmapSummary, periodName, type DeckMastery, type Heatmap } from "./charts";

const CELL = 11;
const GAP = 2;
const LEFT = 26;
const TOP = 14;
// Room for the last month's name past the last column.
const RIGHT = 14;
const DAY_LABELS: [number, string][] = [
  [0, "Mon"],
  [2, "Wed"],
  [4, "Fri"],
];

export function Calendar({ map }: { map: Heatmap }) {
  const width = LEFT + map.weeks * (CELL + GAP) + RIGHT;
  const height = TOP + 7 * (CELL + GAP);
  const summary = heatmapSummary(map);
  return (
    <figure class="plot heatmap">
      <div class="heatmap-box">
        <svg
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-label={`Reviews per day over ${periodName(map.days)}. ${summary}`}
          class="heatmap-svg"
        >
          {map.months.map((month) => (
            <text key={`${month.week}-${month.label}`} x={LEFT + month.week * (CELL + GAP)} y={TOP - 4} class="heatmap-label">
              {month.label}
            </text>
          ))}
          {DAY_LABELS.map(([day, label]) => (
            <text key={label} x={0} y={TOP + day * (CELL + GAP) + CELL - 2} class="heatmap-label">
              {label}
            </text>
          ))}
          {map.cells.map((cell) => (
            <rect
              key={cell.date}
              x={LEFT + cell.week * (CELL + GAP)}
              y={TOP + cell.weekday * (CELL + GAP)}
              width={CELL}
              height={CELL}
              rx={2}
              class={`heat heat-${cell.level}`}
            >
              <title>{`${cell.date}: ${cell.count} ${cell.count === 1 ? "review" : "reviews"}`}</title>
            </rect>
          ))}
        </svg>
      </div>
      <figcaption>
        {summary}
        <span class="heatmap-key" aria-hidden="true">
          Less
          {[0, 1, 2, 3, 4].map((level) => (
            <span key={level} class={`heat-swatch heat-${level}`} />
          ))}
          More
        </span>
      </figcaption>
    </figure>
  );
}

export function MasteryBars({ decks, summary }: { decks: DeckMastery[]; summary: string }) {
  return (
    <figure class="plot mastery">
      <div class="mastery-bars" role="img" aria-label={`Mastery per deck. ${summary}`}>
        {decks.map((deck) => {
          const share = Math.round(Math.max(0, Math.min(1, deck.mastery)) * 100);
          return (
            <div key={deck.deck} class="mastery-row">
              <span class="mastery-label">{deck.title}</span>
              <span class="mastery-track">
                {/* A width from the data, set through the CSSOM, which the style policy allows. */}
                <span class="mastery-fill" style={{ width: `${share}%` }} />
              </span>
              <span class="mastery-value">{share}%</span>
            </div>
          );
        })}
      </div>
      <figcaption>{summary}</figcaption>
    </figure>
  );
}
