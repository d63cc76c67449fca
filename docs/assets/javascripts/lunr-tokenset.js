/*
 * Appended by docs/build.py to the theme's search worker (assets/javascripts/workers/
 * search.*.min.js), after the lunr it bundles has been defined and before any index is built.
 *
 * lunr 2.3.9 builds a minimal automaton of the index's terms, merging two nodes when their
 * string forms are equal.  That form is the node's final flag, then each edge's character
 * followed by the id of the node it leads to, with nothing between them: where characters
 * are digits, two different nodes can read alike ("1" to node 23 then "4" to node 5, and
 * "1" to node 2 then "3" to node 45, both "012345"), get merged, and the automaton
 * then holds words the index lacks.  A query that expands to one of them stops with
 * "Cannot read properties of undefined (reading '_index')" and the search shows nothing
 * (olivernn/lunr.js#503 shows the same symptom).  Which terms collide depends on every
 * term of the site, so it came and went with the content.  Here each id is ended by a
 * comma, which no id contains: a character is one code unit, an id the digits up to the
 * comma, and no two different nodes read alike.
 */
(function (lunr) {
  "use strict";
  if (!lunr || !lunr.TokenSet) {
    return;
  }
  lunr.TokenSet.prototype.toString = function () {
    if (this._str) {
      return this._str;
    }
    var text = this.final ? "1" : "0";
    var labels = Object.keys(this.edges).sort();
    for (var i = 0; i < labels.length; i++) {
      text += labels[i] + this.edges[labels[i]].id + ",";
    }
    return text;
  };
})(self.lunr);
