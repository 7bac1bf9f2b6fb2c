// azero serve: live updates by server-sent events. The page works without
// it; this only shows what happens as it happens.
(function () {
  "use strict";
  var stream = document.body.getAttribute("data-stream");
  if (!stream || !window.EventSource) { return; }

  // What the human typed into an answer form is never thrown away by a
  // reload: the page says it changed and lets them choose.
  function typing() {
    var fields = document.querySelectorAll("form.answer input[type=text], form.answer textarea, form.answer input[type=radio]");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "radio" ? f.checked !== f.defaultChecked : f.value !== f.defaultValue) { return true; }
    }
    return false;
  }
  var pending = null;
  function refresh() {
    if (pending) { return; }
    pending = setTimeout(function () {
      pending = null;
      if (typing()) {
        document.getElementById("notice").hidden = false;
      } else {
        // Shown anew, without the note about an answer already taken.
        var u = new URL(window.location.href);
        u.searchParams.delete("answered");
        window.location.replace(u.toString());
      }
    }, 300);
  }

  var list = document.getElementById("events");
  var live = document.getElementById("live");
  var es = new EventSource(stream);
  es.onopen = function () { if (live) { live.hidden = false; } };
  es.onerror = function () { if (live) { live.hidden = true; } };
  es.addEventListener("run", function (e) {
    var d = JSON.parse(e.data);
    if (list && d.html && !list.querySelector('[data-seq="' + d.seq + '"]')) {
      list.insertAdjacentHTML("beforeend", d.html);
    }
    if (d.reload) { refresh(); }
  });
  es.addEventListener("changed", refresh);
  window.addEventListener("beforeunload", function () { es.close(); });
})();
