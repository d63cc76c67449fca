/* numaspec's matrix (docs/build.py, version_matrix): an anchored row, matrix.html#MERGE-8,
   is shown under its table's header row.

   Each chapter's table scrolls inside its block, at most a screen tall, and its header row
   sticks to the block's top (docs/assets/stylesheets/numaspec.css): a block cannot be
   sticky to the screen, since it scrolls sideways.  The browser brings an anchored row to
   the top of the screen, which leaves the header row above it, out of view.  So the page
   brings the block's top just under the site's header, and the block brings the row just
   under its header row (a table shorter than the block shows it where it is).  That moves
   the page up, and the theme answers a move up with its "Back to top" button, over the very
   header row: so the page stops a pixel short and makes its last move, a frame later, down. */
(function () {
  "use strict";

  function align() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target || !target.closest(".numaspec-matrix")) {
      return;
    }
    var table = target.closest("table");
    var row = target.closest("tr");
    // a header cell, not the header's group, which scrolls away while its cells stick
    var head = table && table.tHead && table.tHead.rows[0] && table.tHead.rows[0].cells[0];
    if (!row || !head) {
      return;
    }
    var block = table.closest(".md-typeset__scrollwrap") || table.parentElement;
    var header = document.querySelector(".md-header");
    var top = header ? header.getBoundingClientRect().bottom : 0;
    var up = block.getBoundingClientRect().top - top;
    window.scrollBy(0, up < 0 ? up - 1 : up);
    block.scrollTop += row.getBoundingClientRect().top - head.getBoundingClientRect().bottom;
    if (up < 0) {
      window.requestAnimationFrame(function () {
        window.scrollBy(0, 1);
      });
    }
  }

  window.addEventListener("load", function () {
    window.requestAnimationFrame(align);
  });
  window.addEventListener("hashchange", align);
})();
