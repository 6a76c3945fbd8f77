// Builds the committed bundle under ../static/web/; the output depends only on the sources, so two
// builds give the same bytes.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const outdir = new URL("../static/web/", import.meta.url).pathname;
// Stale chunks would otherwise stay beside the new ones and be committed.
rmSync(outdir + "chunks", { recursive: true, force: true });
rmSync(outdir + "app.js", { force: true });
rmSync(outdir + "app.css", { force: true });
rmSync(outdir + "theme.js", { force: true });
rmSync(outdir + "sw.js", { force: true });
mkdirSync(outdir, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  legalComments: "none",
  logLevel: "warning",
  target: ["es2022"],
};

await build({
  ...common,
  entryPoints: [{ in: "src/main.tsx", out: "app" }],
  outdir,
  format: "esm",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  jsx: "automatic",
  jsxImportSource: "preact",
  define: { "process.env.NODE_ENV": '"production"' },
});

// A classic script of its own, run before the first paint; the app bundle applies the choice again.
await build({ ...common, entryPoints: [{ in: "src/themeBoot.ts", out: "theme" }], outdir, format: "iife" });

await build({ ...common, entryPoints: [{ in: "src/app.css", out: "app" }], outdir });

// The service worker: the files the app needs to start (the bundle, its chunks, the icon), and a version
// that changes with any of their bytes, so a deploy replaces what browsers keep.
const assets = ["app.js", "app.css", "theme.js", "favicon.svg", ...readdirSync(outdir + "chunks").sort().map((name) => `chunks/${name}`)];
const version = createHash("sha256");
for (const asset of assets) version.update(asset).update(readFileSync(outdir + asset));
const worker = readFileSync(new URL("src/serviceWorker.js", import.meta.url), "utf8")
  .replace("__VERSION__", version.digest("hex").slice(0, 16))
  .replace("__ASSETS__", JSON.stringify(assets.map((asset) => `/static/web/${asset}`)));
writeFileSync(outdir + "sw.js", worker);
