/** Match the Pairs: pick a term and its definition until every pair is matched, against the server's clock. */
import { ErrorMessage, Loading, PageTitle } from "../components/common";
import { plural } from "../format";
import { useTitle } from "../hooks";
import { Board } from "../match/Board";
import { Records } from "../match/Records";
import { FinishedSummary, Setup, StatusBar } from "../match/parts";
import { useMatchGame } from "../match/useMatchGame";

export default function Match({ slug }: { slug: string }) {
  const match = useMatchGame(slug);
  const { deck, phase, game } = match;
  useTitle(`Match the pairs: ${deck?.title ?? slug}`);

  if (match.deckError !== null && deck === null) {
    return (
      <section class="match">
        <PageTitle>Match the pairs</PageTitle>
        <ErrorMessage message={match.deckError} onRetry={match.loadDeck} />
      </section>
    );
  }
  if (deck === null || match.resuming) {
    return (
      <section class="match">
        <PageTitle>Match the pairs</PageTitle>
        <Loading label="Loading the deck…" />
      </section>
    );
  }

  return (
    <div class="match">
      <PageTitle>Match the pairs: {deck.title}</PageTitle>
      {phase === "setup" && (
        <Setup
          cards={deck.cards}
          pairs={match.pairs}
          onPairs={match.setPairs}
          starting={match.starting}
          onStart={() => match.start(match.pairs)}
        />
      )}
      {match.error !== null && <ErrorMessage message={match.error} onRetry={match.retry} />}
      {game !== null && phase === "playing" && (
        <>
          <StatusBar game={game} clock={match.clock} />
          <Board
            game={game}
            busy={match.pending !== null}
            tileRefs={match.tileRefs}
            onChoose={match.choose}
            onTileKey={match.moveFocus}
          />
        </>
      )}
      {game !== null && phase === "finished" && (
        <>
          {game.score !== null && <FinishedSummary game={game} score={game.score} headingRef={match.resultHeading} />}
          <p class="match-actions">
            <button
              type="button"
              class="button primary"
              disabled={match.starting}
              onClick={() => match.start(game.pairs)}
            >
              Play again ({plural(game.pairs, "pair", "pairs")})
            </button>
            <button type="button" class="button secondary" onClick={match.backToSetup}>
              Change the board size
            </button>
          </p>
        </>
      )}
      {phase !== "playing" && (
        <Records
          key={`${phase}-${game?.boardId ?? ""}`}
          slug={slug}
          pairs={phase === "finished" && game ? game.pairs : match.pairs}
        />
      )}
      <p class="visually-hidden" aria-live="polite">
        {match.announcement}
      </p>
    </div>
  );
}
