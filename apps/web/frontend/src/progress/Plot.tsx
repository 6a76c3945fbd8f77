/** A uPlot bar or line plot over day or week positions, as wide as its box, with a name and a summary. */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { useThemeShown } from "../hooks";
import { resolvedColour } from "../theme";
import { indexTicks } from "./charts";

export interface PlotProps {
  /** The accessible name of the plot. */
  label: string;
  /** What the plot shows, in words, for screen readers and as its caption. */
  summary: string;
  kind: "bars" | "line";
  /** One label per position on the x axis. */
  xLabels: string[];
  values: (number | null)[];
  seriesLabel: string;
  yRange?: [number, number];
  yFormat?: (value: number) => string;
  /** The custom property of the series' colour, e.g. "--good": resolved for the theme shown. */
  colour: string;
  height?: number;
}


export function Plot({ label, summary, kind, xLabels, values, seriesLabel, yRange, yFormat, colour, height = 220 }: PlotProps) {
  const box = useRef<HTMLDivElement>(null);
  const theme = useThemeShown();
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const color = resolvedColour(element, colour);
    const lines = resolvedColour(element, "--border");
    const AXIS = { stroke: resolvedColour(element, "--muted"), grid: { stroke: lines, width: 1 }, ticks: { stroke: lines, width: 1 } };
    const width = () => Math.max(240, Math.floor(element.clientWidth));
    const xs = xLabels.map((_, index) => index);
    const options: uPlot.Options = {
      width: width(),
      height,
      legend: { show: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: [-0.6, Math.max(0.6, xLabels.length - 0.4)] },
        y: yRange ? { range: yRange } : { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] },
      },
      axes: [
        { ...AXIS, space: 64, incrs: [1, 2, 3, 4, 5, 7, 10, 14, 28], values: (_u, splits) => indexTicks(splits, xLabels) },
        {
          ...AXIS,
          size: 48,
          values: (_u, splits) => splits.map((value) => (yFormat ? yFormat(value) : String(value))),
        },
      ],
      series: [
        {},
        kind === "bars"
          ? {
              label: seriesLabel,
              stroke: color,
              fill: color,
              width: 0,
              points: { show: false },
              paths: uPlot.paths.bars?.({ size: [0.7, 40] }),
            }
          : {
              label: seriesLabel,
              stroke: color,
              width: 2,
              spanGaps: false,
              points: { show: true, size: 6, fill: color },
            },
      ],
    };
    const plot = new uPlot(options, [xs, values as number[]], element);
    // The canvas carries nothing a screen reader can use: the wrapper's name and the caption say it.
    plot.root.setAttribute("aria-hidden", "true");
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [kind, xLabels, values, seriesLabel, yRange, yFormat, colour, height, theme]);
  return (
    <figure class="plot">
      <div class="plot-box" ref={box} role="img" aria-label={`${label}. ${summary}`} />
      <figcaption>{summary}</figcaption>
    </figure>
  );
}
