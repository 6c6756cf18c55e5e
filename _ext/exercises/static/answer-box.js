/* Answer boxes of the book's exercises (_ext/exercises): checked in the page, with no kernel.
 *
 * Each <form class="answer-box" data-answer='{"expected": [[...]], "rtol": r, "atol": a, "decimals": d,
 * "matrix": m}'> holds the answer the package computed when the book was built. A reader's entry is
 * read as a small arithmetic expression (numbers, + - * / ^, parentheses, sqrt, pi),
 * compared with the answer within atol + rtol * |answer| (numpy's isclose), or, when the
 * question asks for d decimals, with the answer rounded to d decimals within half a unit of
 * the last (atol): an entry that rounds to the same d decimals is right. The status line
 * (role="status", aria-live) echoes the entry as typed (an expression with its value) and says
 * whether it is right and, if not, whether it is too high or too low: never the answer, nor by
 * how much it is off (which would give the answer away: "0.03 is 0.01 too high"); a right
 * answer is shown at the question's precision. Submitting the form (Enter in any
 * entry, or the Check button) checks it. A form with data-solution (the id of the
 * exercise's solution, a <details>) and data-tries shows, after that many wrong answers,
 * its "Show the solution" button, which opens the solution and moves the focus to it.
 */
(function () {
  "use strict";

  /** The value of an expression, or throws Error(message for the reader). */
  function evaluate(text) {
    const source = text.replace(/\u2212/g, "-").replace(/\u00d7|\u22c5|\u00b7/g, "*").replace(/\u00f7/g, "/")
      .replace(/\u221a/g, "sqrt").replace(/\u03c0/g, "pi").trim();
    const tokens = source.match(/\d*\.?\d+(?:[eE][+-]?\d+)?|\d+\.|[A-Za-z]+|\S/g) || [];
    let at = 0;
    const peek = () => tokens[at];
    const take = () => tokens[at++];
    function primary() {
      const token = take();
      if (token === undefined) throw new Error("ends too early");
      if (/^(\d|\.)/.test(token)) return parseFloat(token);
      if (token === "(") {
        const value = sum();
        if (take() !== ")") throw new Error("has a ( without its )");
        return value;
      }
      if (token === "-") return -power();
      if (token === "+") return power();
      if (/^pi$/i.test(token)) return Math.PI;
      if (/^sqrt$/i.test(token)) {
        const value = peek() === "(" ? primary() : power();
        return Math.sqrt(value);
      }
      if (/^(nan|inf|infinity)$/i.test(token)) throw new Error("is not a finite number");
      throw new Error(`has "${token}", which is not a number`);
    }
    function power() {
      const base = primary();
      if (peek() === "^") { take(); return Math.pow(base, power()); }
      return base;
    }
    function product() {
      let value = power();
      while (peek() === "*" || peek() === "/") value = take() === "*" ? value * power() : value / power();
      return value;
    }
    function sum() {
      let value = product();
      while (peek() === "+" || peek() === "-") value = take() === "+" ? value + product() : value - product();
      return value;
    }
    const value = sum();
    if (at < tokens.length) throw new Error(`has "${tokens[at]}" where an operator or the end should be`);
    if (!Number.isFinite(value)) throw new Error("is not a finite number");
    return value;
  }

  /** `x` at `decimals` decimals (0.9993), or to three significant figures without trailing zeros: 0.0123, 1.41e-7. */
  function show(x, decimals) {
    if (Number.isInteger(decimals)) return x.toFixed(decimals).replace(/^-/, "\u2212");
    if (x === 0) return "0";
    const a = Math.abs(x);
    const text = a >= 1e-3 && a < 1e6 ? String(Number(x.toPrecision(3))) : x.toExponential(2).replace(/\.?0+e/, "e");
    return text.replace(/^-/, "\u2212");
  }

  /** A plain number, as a reader types one: -0.25, 2.5e-3, .5 (its minus sign may be Unicode's). */
  const PLAIN = /^[-\u2212+]?(\d+\.?\d*|\.\d+)([eE][-+\u2212]?\d+)?$/;

  /** The entry as the reader typed it: a plain number as it is, an expression with its value. */
  function echo(text, value, decimals) {
    const typed = text.replace(/\s+/g, " ");
    return PLAIN.test(typed) ? typed.replace(/^-/, "\u2212") : `${typed} = ${show(value, decimals)}`;
  }

  /** The answer the entries are compared with: as computed, or rounded to the decimals the question asks. */
  function target(answer, data) {
    return Number.isInteger(data.decimals) ? Number(answer.toFixed(data.decimals)) : answer;
  }

  /** Which way `value` is off from `answer`, in words, without saying by how much. */
  function direction(value, answer) {
    return value > answer ? "too high" : "too low";
  }

  // 1e-9 of slack: an entry exactly on the half of the last decimal ("0.49945" for 0.4995) is right,
  // whatever rounding the subtraction of two doubles does (their spacing is ~1e-16 of them).
  function close(value, answer, data) {
    const goal = target(answer, data);
    return Math.abs(value - goal) <= (data.atol + data.rtol * Math.abs(goal)) * (1 + 1e-9);
  }

  function label(input, data) {
    return data.matrix ? input.getAttribute("aria-label").replace(/^r/, "R") : "Your answer";
  }

  /** The feedback for the entries of `inputs` (row by row), and the inputs it marks as wrong. */
  function check(inputs, data) {
    const expected = data.expected.flat();
    const values = [], typed = [];
    for (const input of inputs) {
      const text = input.value.trim();
      if (text === "") {
        const where = data.matrix ? `${label(input, data)} is empty: type a number in every entry.`
          : "Type a number first.";
        return { message: where, wrong: [input] };
      }
      try {
        values.push(evaluate(text));
        typed.push(text);
      } catch (error) {
        return {
          message: `${label(input, data)}: \u201c${text}\u201d ${error.message}. ` +
            "Type a number such as 0.25, 1/4 or 2*sqrt(2).",
          wrong: [input],
        };
      }
    }
    const off = values.map((v, k) => (close(v, expected[k], data) ? null : k)).filter((k) => k !== null);
    const entry = (k) => echo(typed[k], values[k], data.decimals);
    if (!data.matrix) {
      return off.length
        ? { message: `Not yet: ${entry(0)} is ${direction(values[0], target(expected[0], data))}.`, wrong: inputs }
        : { message: `Right: ${entry(0)} matches the answer, ${show(expected[0], data.decimals)}.`, wrong: [] };
    }
    if (!off.length) return { message: `Right: all ${values.length} entries match.`, wrong: [] };
    const details = off.slice(0, 3).map((k) =>
      `${label(inputs[k], data)}: ${entry(k)} is ${direction(values[k], target(expected[k], data))}.`);
    const more = off.length > 3 ? ` ${off.length - 3} more entries are off too.` : "";
    return {
      message: `Not yet: ${off.length} of ${values.length} entries are off. ${details.join(" ")}${more}`,
      wrong: off.map((k) => inputs[k]),
    };
  }

  /** The solution's button: it opens the <details>, scrolls to it and moves the focus to its summary. */
  function offerSolution(form) {
    const solution = document.getElementById(form.dataset.solution || "");
    const offer = form.querySelector(".answer-box-offer");
    if (!solution || !offer) return null;
    offer.querySelector("button").addEventListener("click", () => {
      solution.open = true;
      const summary = solution.querySelector("summary") || solution;
      summary.focus({ preventScroll: true });
      solution.scrollIntoView({ block: "start" });
    });
    return { offer, after: Number(form.dataset.tries) || 3 };
  }

  function setUp(form) {
    const data = JSON.parse(form.dataset.answer);
    const inputs = Array.from(form.querySelectorAll("input.answer-box-input"));
    const status = form.querySelector(".answer-box-feedback");
    const solution = offerSolution(form);
    let wrongTries = 0;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const result = check(inputs, data);
      for (const input of inputs) input.removeAttribute("aria-invalid");
      for (const input of result.wrong) input.setAttribute("aria-invalid", "true");
      form.classList.toggle("answer-box-right", result.wrong.length === 0);
      form.classList.toggle("answer-box-wrong", result.wrong.length > 0);
      let message = result.message;
      if (result.message.startsWith("Not yet") && solution && ++wrongTries >= solution.after) {
        solution.offer.hidden = false;
        message += " Stuck? The button below opens the solution.";
      }
      status.textContent = message;
    });
  }

  document.querySelectorAll("form.answer-box").forEach(setUp);
})();
