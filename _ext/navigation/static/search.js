/*
 * navigation: the book's search ranking and snippets. This is Sphinx's html_search_scorer: Sphinx
 * writes it at the end of language_data.js, which only the search page loads, after searchtools.js
 * (whose `Search`, `Scorer` defaults, `splitQuery`, and language_data.js's `Stemmer` and `stopwords`
 * it uses). See _ext/navigation/__init__.py.
 *
 * Ranking: Sphinx gives a page 15 when a query word is in any of its section titles, 5 when it is
 * only in its text, and orders equal scores by title. Here a page gains TITLE_BOOST times the share
 * of the query's words found in its own title (a word of the title counts when its stem is the
 * query word's, or when it starts with it: "noise" finds "A noisy signal"; a word found as written
 * counts in full, one found only by its stem or start STEM_ONLY: "learning" ranks "Learning the
 * head" above "Heads that learn while they read"), and SECTION_BOOST for
 * each of its section titles that holds one (at most MAX_SECTIONS): the page a reader names comes
 * first, then the pages with the most sections about it.
 *
 * Snippets: Sphinx took 240 characters around the match in the page's [role="main"], which here
 * begins with the in-page table of contents. A snippet is now the sentence around a match in the
 * article's prose (paragraphs, list items, captions, table cells; then headings; never code, outputs
 * or answer boxes), a formula as a line of text (x^2, κ_h): the first block that matches the most
 * query words in its own text (not in a link to another chapter), then in its links; else the line
 * of code (or of the landing page's table of contents) that holds it; when the query is only in
 * titles, the page's first paragraph after its opening box. A sentence longer than MAX_SNIPPET is
 * cut around the match; one that goes on in a display formula ends with "..."; a reference of the
 * bibliography is whole.
 *
 * Sections: a result links to the section of the page that holds its snippet (the nearest section
 * with an id around the block), not the page's top; a page found through the book's index (the
 * chapters' `index` directives, which Sphinx puts in the search index) is listed once, linked to the
 * indexed section, with the better of the two scores: "KV cache" finds §13.2 first.
 *
 * A query is tamed before anything runs: its words (split at spaces) are kept once each, the first
 * MAX_WORDS of them, and at most MAX_QUERY characters, so that a link with one word repeated thousands
 * of times cannot hold the page (each word is compared with every title of the book).
 */
var Scorer = (function () {
  "use strict";

  const TITLE_BOOST = 50;
  const SECTION_BOOST = 0.5;
  const MAX_SECTIONS = 10;
  const MAX_SNIPPET = 240;
  const MAX_WORDS = 8;
  const MAX_QUERY = 120;
  /** The stems of the current query's words, and the words themselves (set as each query starts). */
  let queryStems = [];
  let queryWords = new Set();
  /** What a query word counts for in a title that holds it only by its stem or start (as written: 1). */
  const STEM_ONLY = 0.75;

  /** The stems of a text's words, as Sphinx's search stems the query (stop words and numbers left out). */
  function stemsOf(text) {
    const stemmer = new Stemmer();
    return splitQuery(text.toLowerCase())
      .filter((word) => !stopwords.includes(word) && !/^\d+$/.test(word) && !word.startsWith("-"))
      .map((word) => ({ word, stem: stemmer.stemWord(word) }));
  }

  /** The stems of each title, computed once a page load (a query compares every word with every title). */
  const titleStems = new Map();

  /** The words of `title` (the index's, maybe with HTML: its section number) and their stems. */
  function titleWords(title) {
    if (!titleStems.has(title)) titleStems.set(title, stemsOf(plain(title)));
    return titleStems.get(title);
  }

  /** Does `title` hold the query word whose stem is `stem`? */
  function titleHolds(title, stem) {
    return titleWords(title).some(({ word, stem: s }) => s === stem || (stem.length >= 4 && word.startsWith(stem)));
  }

  /** How much `title` holds of the query word whose stem is `stem`: 1 as written, STEM_ONLY by stem or start. */
  function titleShare(title, stem) {
    if (!titleHolds(title, stem)) return 0;
    return titleWords(title).some(({ word, stem: s }) => s === stem && queryWords.has(word)) ? 1 : STEM_ONLY;
  }

  /** A title of the index without its markup and its number ("5.2. ", or an appendix's "A. "). */
  function plain(title) {
    return title.replace(/<[^>]*>/g, "").replace(/^(?:[A-Z]\.)?[\d.]*\s+/, "");
  }

  /** The query a search runs: each word once (case aside), at most MAX_WORDS words and MAX_QUERY characters. */
  function tame(text) {
    const seen = new Set();
    const words = [];
    const head = text.length > MAX_QUERY * MAX_WORDS
      ? text.slice(0, MAX_QUERY * MAX_WORDS).replace(/\S+$/, "") || text.slice(0, MAX_QUERY)  // no cut word
      : text;
    for (const word of head.split(/\s+/)) {
      const key = word.toLowerCase();
      if (!word || seen.has(key)) continue;
      if (!words.length && word.length > MAX_QUERY) return word.slice(0, MAX_QUERY);  // one very long word
      if (words.length === MAX_WORDS || [...words, word].join(" ").length > MAX_QUERY) break;
      seen.add(key);
      words.push(word);
    }
    return words.join(" ");
  }

  /** Sphinx's score of a result [docname, title, anchor, descr, score, filename], raised as described above. */
  function bookScore(result) {
    const [docname, , anchor, , score] = result;
    const index = Search._index;
    const file = index.docnames.indexOf(docname);
    if (file < 0 || !queryStems.length || anchor) return score;
    const held = queryStems.reduce((sum, stem) => sum + titleShare(index.titles[file], stem), 0);
    const sections = sectionsOf(file);
    return score + (TITLE_BOOST * held) / queryStems.length + SECTION_BOOST * Math.min(sections, MAX_SECTIONS);
  }

  /** file -> how many of its section titles (not its own title) hold a query word: one pass a query. */
  let sectionCounts = null;
  function sectionsOf(file) {
    if (!sectionCounts) {
      const index = Search._index;
      sectionCounts = new Map();
      for (const [title, places] of Object.entries(index.alltitles)) {
        if (!queryStems.some((stem) => titleHolds(title, stem))) continue;
        for (const [f] of places) {
          if (title !== plain(index.titles[f])) sectionCounts.set(f, (sectionCounts.get(f) || 0) + 1);
        }
      }
    }
    return sectionCounts.get(file) || 0;
  }

  const query = Search.query;
  Search.query = (text) => {
    performance.mark("book-search");  // where the search begins (benchmarks/bench_search.py times from it)
    const tamed = tame(text);
    Search.tamedQuery = tamed;  // what was searched, for the page and its tests
    for (const field of document.querySelectorAll('input[name="q"]')) {
      if (field.value === text) field.value = tamed;  // the search field shows what was searched
    }
    const terms = stemsOf(tamed);
    queryStems = [...new Set(terms.map(({ stem }) => stem))];
    queryWords = new Set(terms.map(({ word }) => word));
    sectionCounts = null;
    return query(tamed);
  };

  // One result per page: a query as long as half a page's title also finds that title (Sphinx's
  // "alltitles"), whose text lacks the section number the index's page title has ("10. Many heads"),
  // so Sphinx kept both ("10. Many heads > Many heads"). The page keeps its best score and its title.
  const perform = Search._performSearch;
  Search._performSearch = (...args) => {
    const results = perform(...args);
    const index = Search._index;
    const whole = (r) => !r[2] && !r[3];  // no anchor, no description: the page itself
    const best = new Map();
    for (const r of results.filter(whole)) {
      if (!best.has(r[0]) || r[4] >= best.get(r[0])[4]) best.set(r[0], r);
    }
    const kept = results.filter((r) => !whole(r) || best.get(r[0]) === r).map((r) => {
      const file = index.docnames.indexOf(r[0]);
      if (whole(r) && file >= 0) r[1] = index.titles[file];
      return r;
    });
    return oneForIndexedPages(kept, whole);
  };

  /**
   * A page found both as a whole and through the book's index ("#index-3": Sphinx's results for the
   * `index` directives) is listed once: the page's result, linked to its best indexed section, with
   * the better score. Sphinx lists results in ascending score (it shows them from the end).
   */
  function oneForIndexedPages(results, whole) {
    const indexed = (r) => /^#index-\d+$/.test(r[2]) && !r[3];
    const bestIndexed = new Map();
    for (const r of results.filter(indexed)) {
      if (!bestIndexed.has(r[0]) || r[4] > bestIndexed.get(r[0])[4]) bestIndexed.set(r[0], r);
    }
    const pages = new Set(results.filter(whole).map((r) => r[0]));
    const merged = results.filter((r) => !indexed(r) || (!pages.has(r[0]) && bestIndexed.get(r[0]) === r));
    for (const r of merged) {
      const entry = whole(r) && bestIndexed.get(r[0]);
      if (entry) { r[2] = entry[2]; r[4] = Math.max(r[4], entry[4]); }
    }
    return merged.map((r, k) => [r, k]).sort(([a, i], [b, j]) => a[4] - b[4] || i - j).map(([r]) => r);
  }

  /**
   * The id of the section of `page` around `block` (the nearest <section id> holding it, not the page's
   * own): where its result links. Null for a block of the page's opening.
   */
  function sectionOf(block, page) {
    const section = block.closest("section[id]");
    const top = page.querySelector("article section[id]");
    return section && section !== top ? section.id : null;
  }

  const PROSE = "p, li:not(:has(p)), dd:not(:has(p)), figcaption, caption, th, td";
  const HEADINGS = "h1, h2, h3, h4, h5, h6";
  const NOT_PROSE = ".cell_input, .cell_output, .highlight, pre, form.answer-box, nav, .toctree-wrapper, "
    + ".headerlink, script, style, noscript, .katex-html, annotation";

  /**
   * The text of `block` (its formulas by mathText, its whitespace collapsed) and the ranges of it
   * that are links: a match in the page's own words is a better snippet than one in a link to
   * another chapter ("... as Attention is kernel regression showed").
   */
  function textOf(block) {
    const copy = block.cloneNode(true);
    copy.querySelectorAll(".katex").forEach((formula) => {
      const math = formula.querySelector("math");
      formula.replaceWith(math ? mathText(math) : "");
    });
    copy.querySelectorAll(NOT_PROSE).forEach((el) => el.remove());
    const walker = copy.ownerDocument.createTreeWalker(copy, NodeFilter.SHOW_TEXT);
    let text = "";
    const links = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // MathML's invisible operators (function application, separators) have no place in a snippet.
      let part = node.data.replace(/[\u2061-\u2064]/g, "").replace(/\s+/g, " ");
      if (text === "" || text.endsWith(" ")) part = part.replace(/^ /, "");
      if (node.parentElement.closest("a")) links.push([text.length, text.length + part.length]);
      text += part;
    }
    return { text: text.trimEnd(), links };
  }

  /** Does a sentence end at the punctuation text[at] (not after an initial, "e.g." or "Fig.")? */
  function endsSentence(text, at) {
    return !/(^|[\s(])([A-Z]|e\.g|i\.e|cf|Fig|Eq|vs|al)$/.test(text.slice(0, at));
  }

  /** A MathML formula in one line of text: x^2, κ_h, a/b, √(x); its TeX annotation left out. */
  function mathText(node) {
    const parts = [...node.children].filter((c) => c.localName !== "annotation").map(mathText);
    const group = (t) => (t.length > 1 ? `(${t})` : t);
    switch (node.localName) {
      case "msup": return `${parts[0]}^${group(parts[1])}`;
      case "msub": return `${parts[0]}_${group(parts[1])}`;
      case "msubsup": return `${parts[0]}_${group(parts[1])}^${group(parts[2])}`;
      case "mfrac": return `${group(parts[0])}/${group(parts[1])}`;
      case "msqrt": return `√${group(parts.join(""))}`;
      case "mi": case "mn": case "mo": case "mtext": return node.textContent.replace(/[\u2061-\u2064]/g, "");
      case "mspace": return " ";
      default: return parts.join("");
    }
  }

  /** The sentence of `text` around index `at` (to MAX_SNIPPET characters, cut at words, with "..."). */
  function sentenceAround(text, at, length) {
    let start = 0;
    for (const m of text.slice(0, at).matchAll(/[.!?]\s+(?=\S)/g)) {
      if (endsSentence(text, m.index)) start = m.index + m[0].length;
    }
    let end = text.length;
    for (const m of text.slice(at + length).matchAll(/[.!?](?=\s|$)/g)) {
      if (endsSentence(text, at + length + m.index)) { end = at + length + m.index + 1; break; }
    }
    return cut(text, start, end, at, length);
  }

  /** text[start:end], or MAX_SNIPPET characters of it around the match at `at`, cut at words, with "...". */
  function cut(text, start, end, at, length) {
    let head = "", tail = "";
    if (end - start > MAX_SNIPPET) {
      const from = Math.max(start, at - Math.floor((MAX_SNIPPET - length) / 2));
      const to = Math.min(end, from + MAX_SNIPPET);
      const cutStart = from > start ? text.indexOf(" ", from) + 1 : start;
      const cutEnd = to < end ? text.lastIndexOf(" ", to) : end;
      if (cutStart > start) head = "...";
      if (cutEnd < end) tail = "...";
      start = cutStart; end = cutEnd;
    }
    return head + text.slice(start, end).trim() + tail;
  }

  /**
   * The best match of the query's stems in `text`: {at, length, rank}, rank being the number of
   * stems matched in the page's own words, then in all (higher is better); null if none.
   */
  function bestMatch({ text, links }, patterns) {
    const inLink = (at) => links.some(([a, b]) => at >= a && at < b);
    let own = 0, any = 0, first = null, firstOwn = null;
    for (const pattern of patterns) {
      const found = [...text.matchAll(pattern)];
      if (!found.length) continue;
      any++;
      const mine = found.find((m) => !inLink(m.index));
      if (mine) own++;
      if (!first || found[0].index < first.index) first = found[0];
      if (mine && (!firstOwn || mine.index < firstOwn.index)) firstOwn = mine;
    }
    const m = firstOwn || first;
    return m ? { at: m.index, length: m[0].length, rank: own * 100 + any } : null;
  }

  /**
   * What of a page a snippet reads: its article, without KaTeX's HTML rendering of each formula (its
   * MathML, which mathText reads, stays). Parsing a whole chapter (up to 700 KB) was the search page's
   * longest task; this is a fraction of it, cut with string searches, which are far cheaper than parsing.
   */
  function lighter(html) {
    const start = html.indexOf("<article"), end = html.lastIndexOf("</article>");
    const text = start >= 0 && end > start ? html.slice(start, end + "</article>".length) : html;
    const open = '<span class="katex-html"';
    const tags = /<span\b|<\/span>/g;
    let out = "", at = 0;
    for (let i = text.indexOf(open); i >= 0; i = text.indexOf(open, at)) {
      let depth = 0, close = -1;
      tags.lastIndex = i;
      for (let m = tags.exec(text); m; m = tags.exec(text)) {
        depth += m[0] === "</span>" ? -1 : 1;
        if (depth === 0) { close = tags.lastIndex; break; }
      }
      if (close < 0) break;  // not closed: keep the rest as it is
      out += text.slice(at, i);
      at = close;
    }
    return out + text.slice(at);
  }

  Search.makeSearchSummary = (htmlText, keywords, anchor) => {
    const page = new DOMParser().parseFromString(lighter(htmlText), "text/html");
    const p = document.createElement("p");  // Sphinx appends what this returns: never null
    p.classList.add("context");
    const article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
    if (!article) return p;
    // An anchor names a section (a title's result) or an index entry's target, an empty mark in its section.
    const target = anchor && page.getElementById(decodeURIComponent(anchor.slice(1)));
    const scope = (target && (target.matches("section") ? target : target.closest("section"))) || article;
    const patterns = [...keywords].filter((k) => k.length > 1)
      .map((k) => new RegExp(`\\b${k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\w*`, "gi"));
    const blocks = (selector) => [...scope.querySelectorAll(selector)].filter((b) => !b.closest(NOT_PROSE));
    // A word that textOf's text holds is in the block's plain text too (textOf removes parts and puts
    // signs between a formula's; only a word joined across a removed part is lost): a block whose plain
    // text holds none of the words, or too few to beat the best match so far, is passed over before
    // textOf, the costly step (most of a long chapter's summary, and the search page's longest task).
    const words = [...keywords].filter((k) => k.length > 1)
      .map((k) => new RegExp(k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"));
    let summary = "";
    for (const selector of [PROSE, HEADINGS]) {
      let best = null;
      for (const block of blocks(selector)) {
        const plainText = block.textContent.replace(/[\u2061-\u2064]/g, "");
        const held = words.filter((word) => word.test(plainText)).length;
        if (!held || (best && best.match.rank >= 101 * held)) continue;  // rank <= 101 x the words matched
        const text = textOf(block);
        const match = bestMatch(text, patterns);
        if (match && (!best || match.rank > best.match.rank)) best = { block, text: text.text, match };
        if (best && best.match.rank === 101 * patterns.length) break;  // every stem, in the page's words
      }
      if (best) {
        const section = anchor ? null : sectionOf(best.block, page);
        // Sphinx appends this paragraph to the result's <li> as soon as it is returned: then link its section.
        if (section) queueMicrotask(() => {
          const link = p.parentElement?.querySelector("a");
          const href = link?.getAttribute("href");
          if (href && !href.includes("#")) link.setAttribute("href", `${href}#${section}`);
        });
        const { at, length } = best.match;
        // A reference of the bibliography is one entry, not sentences: all of it.
        summary = best.block.closest(".citation") ? cut(best.text, 0, best.text.length, at, length)
          : sentenceAround(best.text, at, length);
        // A sentence that goes on in a display formula says so.
        if (!/[.!?;:]$/.test(summary) && best.block.nextElementSibling?.matches("div.math")) summary += " ...";
        break;
      }
    }
    // Only in code, or in the book's table of contents (the landing page): the line that holds it.
    const lines = (selector) => [...scope.querySelectorAll(selector)]
      .flatMap((el) => el.textContent.split("\n")).map((line) => line.replace(/\s+/g, " ").trim());
    for (const selector of ["pre", ".toctree-wrapper li > a"]) {
      if (summary) break;
      const line = lines(selector).find((text) => patterns.some((pattern) => text.match(pattern)));
      if (line) summary = line.length > MAX_SNIPPET ? `${line.slice(0, MAX_SNIPPET)}...` : line;
    }
    if (!summary) {  // only in titles: the page's first paragraph after its opening box
      const first = blocks("p").filter((b) => !b.closest(".chapter-goals")).map((b) => textOf(b).text)
        .find((text) => text.length > 0) || "";
      summary = first ? sentenceAround(first, 0, 0) : "";
    }
    p.textContent = summary;
    return p;
  };

  return {
    // Sphinx's defaults (searchtools.js), and the score above.
    objNameMatch: 11, objPartialMatch: 6, objPrio: { 0: 15, 1: 5, 2: -5 }, objPrioDefault: 0,
    title: 15, partialTitle: 7, term: 5, partialTerm: 2,
    score: bookScore,
  };
})();
