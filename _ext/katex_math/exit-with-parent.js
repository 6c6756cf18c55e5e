// Loaded by Node before sphinxcontrib-katex's server (`node --require`): the server
// ends, and removes the folder of its socket, when the build process that started it
// ends, however it ends. That process holds the other end of standard input and never
// writes to it: when it exits, the kernel closes the pipe and Node sees its end.
"use strict";
const fs = require("fs");
const path = require("path");

const at = process.argv.indexOf("--socket");
const socketFolder = at > 0 ? path.dirname(process.argv[at + 1]) : null;

process.stdin.on("end", () => {
  if (socketFolder !== null) {
    fs.rmSync(socketFolder, { recursive: true, force: true });
  }
  process.exit(0);
});
process.stdin.resume();
