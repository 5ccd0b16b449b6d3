// Copies the front-end packages installed by `npm ci` into static/vendor, so the box serves
// every script itself (no CDN). Run by `make vendor` with the node_modules it installed the
// running box's packages into (default: the one beside this file); static/vendor is not
// committed.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "static", "vendor");
const modules = process.argv[2] ? resolve(process.argv[2]) : join(here, "node_modules");
mkdirSync(out, { recursive: true });
const files = [
  ["socket.io-client/dist/socket.io.min.js", "socket.io.min.js"],
  ["socket.io-client/LICENSE", "socket.io-client.LICENSE"],
];
for (const [from, to] of files) {
  copyFileSync(join(modules, from), join(out, to));
}
console.log(`vendor: ${files.length} files in ${out}`);
