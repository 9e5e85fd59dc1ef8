// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Print buttons are hidden until JavaScript can make them work.
  document.querySelectorAll(".print-button").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () { window.print(); });
  });
  // play plays one of the page's sounds (hold found, transfer, question, error),
  // unless the workstation turned sounds off.
  var sounds = {};
  document.querySelectorAll("audio[data-sound]").forEach(function (a) { sounds[a.getAttribute("data-sound")] = a; });
  var soundOn = document.body.getAttribute("data-sounds") !== "off";
  function play(kind) {
    var a = kind && soundOn && sounds[kind];
    if (!a) { return; }
    a.currentTime = 0;
    var p = a.play();
    if (p && p.catch) { p.catch(function () {}); }
  }

  var form = document.getElementById("scan-form");
  if (form && window.htmx) { desk(form); scannerKeys(form); }

  // A Check in message acknowledged through htmx (its form has data-ack) gives
  // the scan field its focus back: the button it had is gone. (The form is gone
  // too, so the event comes from the page around it; the request names the form.)
  document.addEventListener("htmx:afterRequest", function (ev) {
    var f = ev.detail && ev.detail.requestConfig && ev.detail.requestConfig.elt;
    var field = document.getElementById("scan");
    if (field && f && f.hasAttribute && f.hasAttribute("data-ack")) { field.focus(); }
  });

  // desk turns a Check out or Check in page into a scan queue. A barcode scanner
  // types digits and Enter into whatever has focus, at its own pace: each scan is
  // taken at once into a queue (the field is cleared and keeps focus), shown as a
  // row of the list, and sent to the server one at a time, in order. The server
  // answers with the scan's row (htmx swaps it in place of the waiting row) and,
  // out of band, the parts of the page it changed. A row that needs a decision,
  // or a scan that got no answer, holds the queue until staff act: the scanner's
  // Enter never confirms, cancels or dismisses anything.
  function desk(form) {
    var field = document.getElementById("scan");
    var list = document.getElementById("scan-list");
    var url = form.getAttribute("data-scan-url");
    var name = form.getAttribute("data-scan-name");
    var deskEl = document.getElementById("desk");
    var idleMinutes = parseInt(deskEl.getAttribute("data-idle-minutes") || "0", 10);
    // The server gives its URLs, under the base path it is mounted at (/library/...).
    var doneURL = deskEl.getAttribute("data-done-url");
    var queue = [];
    var sending = null;
    var lastActive = Date.now();
    var columns = list.parentNode.querySelector("thead tr").children.length;
    form.noValidate = true;

    function cell(text) {
      var td = document.createElement("td");
      td.textContent = text;
      return td;
    }
    function waitingRow(label) {
      var tr = document.createElement("tr");
      tr.className = "scan scan-waiting";
      tr.setAttribute("data-outcome", "waiting");
      tr.setAttribute("data-scan", label);
      tr.appendChild(cell(label));
      var status = cell("Waiting");
      status.colSpan = columns - 1;
      status.className = "scan-status";
      tr.appendChild(status);
      return tr;
    }
    function setStatus(tr, text) {
      var s = tr.querySelector(".scan-status");
      if (s) { s.textContent = text; }
    }
    function showList() {
      list.closest("table").hidden = false;
      var empty = document.querySelector(".scan-empty");
      if (empty) { empty.remove(); }
    }
    // blocker is the row the queue waits for: a decision, or a scan that failed.
    function blocker() {
      return list.querySelector('tr[data-outcome="decision"], tr[data-outcome="failed"]');
    }

    function enqueue(entry) {
      entry.row = waitingRow(entry.label);
      list.insertBefore(entry.row, list.firstChild);
      showList();
      queue.push(entry);
      pump();
    }

    function pump() {
      var b = blocker();
      queue.forEach(function (e) {
        if (e !== sending && e.row.getAttribute("data-outcome") === "waiting") {
          setStatus(e.row, b ? "Waiting for your decision on " + b.getAttribute("data-scan") : "Waiting");
        }
      });
      if (sending || queue.length === 0 || b) { return; }
      var e = queue[0];
      sending = e;
      setStatus(e.row, "Sending…");
      send(e.url, e.values, e.row, function (row, failure) {
        sending = null;
        if (failure) {
          fail(e, failure);
        } else {
          queue.shift();
          outcome(row);
        }
        pump();
      });
    }

    // send posts values to url and swaps the answer in place of row; done gets the
    // new row, or a failure's description when no row came back.
    function send(url, values, row, done) {
      var after = row.nextElementSibling;
      var status = 0;
      row.addEventListener("htmx:afterRequest", function (ev) {
        status = ev.detail && ev.detail.xhr ? ev.detail.xhr.status : 0;
      });
      htmx.ajax("POST", url, { source: row, target: row, swap: "outerHTML", values: values }).then(function () {
        if (document.body.contains(row)) {
          done(null, status === 401 ? "You are signed out: sign in again in a new tab, then send it again" :
            "The server could not answer (" + (status || "no status") + ")");
          return;
        }
        done(after ? after.previousElementSibling : list.lastElementChild, null);
      }, function () {
        done(null, "No answer from the server");
      });
    }

    // fail shows a scan that got no answer. Nothing after it is sent until staff
    // send it again or remove it: it may or may not have been done.
    function fail(e, why) {
      var tr = e.row;
      tr.className = "scan scan-failed";
      tr.setAttribute("data-outcome", "failed");
      var s = tr.querySelector(".scan-status");
      s.textContent = why + ". It may not have been done, and nothing after it was sent. ";
      var again = document.createElement("button");
      again.type = "button";
      again.className = "secondary small";
      again.textContent = "Send again";
      again.addEventListener("click", function () {
        tr.className = "scan scan-waiting";
        tr.setAttribute("data-outcome", "waiting");
        s.textContent = "Waiting";
        pump();
        field.focus();
      });
      var drop = document.createElement("button");
      drop.type = "button";
      drop.className = "secondary small";
      drop.textContent = "Remove";
      drop.addEventListener("click", function () {
        queue.splice(queue.indexOf(e), 1);
        tr.remove();
        pump();
        field.focus();
      });
      s.appendChild(again);
      s.appendChild(document.createTextNode(" "));
      s.appendChild(drop);
      play("error");
    }

    // outcome tidies the list after a row came back, plays its sound and gives the
    // field its focus back.
    function outcome(row) {
      if (row && row.getAttribute("data-new-visit")) {
        // The previous patron's rows go; scans still waiting stay (they are above).
        while (row.nextElementSibling) { row.nextElementSibling.remove(); }
      }
      var keep = parseInt(list.getAttribute("data-keep") || "0", 10);
      if (row && keep > 0) {
        // Check in: the latest return of each item, and only so many.
        var scanned = row.getAttribute("data-scan");
        list.querySelectorAll('tr[data-outcome="done"]').forEach(function (tr) {
          if (tr !== row && tr.getAttribute("data-scan") === scanned && row.getAttribute("data-outcome") === "done") { tr.remove(); }
        });
        var rows = list.querySelectorAll('tr:not([data-outcome="waiting"])');
        for (var i = keep; i < rows.length; i++) { rows[i].remove(); }
      }
      if (row) { play(row.getAttribute("data-sound")); }
      refocus();
    }

    function refocus() {
      var a = document.activeElement;
      if (!a || a === document.body || a.tagName === "BUTTON" || !document.body.contains(a)) {
        field.focus();
      }
    }

    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var value = field.value.trim();
      field.value = "";
      field.focus();
      lastActive = Date.now();
      if (value === "") { return; }
      var values = {};
      values[name] = value;
      enqueue({ url: url, values: values, label: value });
    });

    // Decisions and desk actions. A decision's buttons answer that row; other
    // desk forms (Finish, Renew, Choose) join the queue behind the scans.
    document.addEventListener("submit", function (ev) {
      var f = ev.target;
      if (f === form || !deskEl.contains(f)) { return; }
      var row = f.closest('tr[data-outcome="decision"]');
      var label = f.getAttribute("data-queue");
      if (!row && label === null) { return; }
      ev.preventDefault();
      lastActive = Date.now();
      var values = {};
      new FormData(f).forEach(function (v, k) {
        if (values[k] === undefined) { values[k] = v; } else { values[k] = [].concat(values[k], v); }
      });
      if (!row) {
        enqueue({ url: f.action, values: values, label: label });
        return;
      }
      if (row.getAttribute("data-busy")) { return; }
      row.setAttribute("data-busy", "true");
      f.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      send(f.action, values, row, function (newRow, failure) {
        if (failure) {
          row.removeAttribute("data-busy");
          f.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
          play("error");
          window.alert(failure + ": try again.");
        } else {
          outcome(newRow);
        }
        pump();
      });
    }, true);

    // Alt+C confirms and Alt+X cancels the decision the queue waits for: keys a
    // scanner does not send.
    document.addEventListener("keydown", function (ev) {
      lastActive = Date.now();
      if (!ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
      var b = blocker();
      var key = (ev.key || "").toLowerCase();
      var button = b && b.querySelector('button[data-shortcut="' + key + '"]');
      if (button && !button.disabled) {
        ev.preventDefault();
        button.click();
      }
    });
    document.addEventListener("pointerdown", function () { lastActive = Date.now(); });

    // The visit ends when the desk has been idle for the library's minutes, so the
    // next patron never sees the previous one.
    if (idleMinutes > 0 && doneURL) {
      window.setInterval(function () {
        if (!document.querySelector("#desk-patron [data-patron]") || sending) { return; }
        if (Date.now() - lastActive >= idleMinutes * 60000) {
          lastActive = Date.now();
          // A question nobody answered, and the scans waiting behind it, go with
          // the visit: none of them was done.
          var b = blocker();
          if (b) {
            b.className = "scan scan-cancelled";
            b.setAttribute("data-outcome", "cancelled");
          }
          queue.forEach(function (e) {
            e.row.className = "scan scan-cancelled";
            e.row.setAttribute("data-outcome", "cancelled");
            setStatus(e.row, "Not sent: the desk was idle");
          });
          queue = [];
          enqueue({ url: doneURL, values: { reason: "idle" }, label: "Idle" });
        }
      }, 5000);
    }
  }

  // scannerKeys makes every keystroke on a desk page a scan unless a person is
  // typing. A barcode scanner types its characters, then Enter, into whatever has
  // focus, faster than anyone types: the body's data-scan-gap (the workstation's
  // scanner key gap, in milliseconds) is the longest average gap between its keys.
  // An Enter is the scanner's when the keys before it came, on average, within
  // the gap (the Enter's own gap included); the keys of the scan are the longest
  // such run before it, so that one late key does not split a scan and a stray
  // key pressed earlier is not part of it.
  //
  // - Focus on a button, a link, a checkbox or the page itself: printable keys
  //   are held back (a key on a button does nothing anyway). A scanner's Enter
  //   presses and follows nothing: its keys go to the scan field and the queue,
  //   and the scan field has the focus after it. An Enter or a Space after no
  //   scanner's keys is a person's, and does what it always does (Tab then Enter
  //   or Space on Confirm confirms); one or two keys held back before a
  //   person's Enter are dropped, as they would do nothing without this script.
  //   Three or more, then Enter, slower than a scanner, press nothing either:
  //   the keys are dropped with the error sound and the scan field takes the
  //   focus (a slow scanner's scan is tried again; a person presses Enter again).
  // - Focus in the scan field: nothing changes. Keys held back when the focus
  //   moved to it (the desk gives it focus when an answer arrives) go in first.
  // - Focus in another text field (a note, a search): what a person types stays
  //   there, Enter included. Only a scanner's run of at least four characters
  //   ending in Enter, just before the caret, is taken out of that field and sent
  //   as a scan; the focus stays in the field for the person to go on.
  function scannerKeys(form) {
    var field = document.getElementById("scan");
    var gap = parseInt(document.body.getAttribute("data-scan-gap") || "", 10);
    if (!(gap > 0)) { gap = 50; }
    // Keys older than this are forgotten: a stray key, not the start of a scan.
    var pause = Math.max(1000, 10 * gap);
    // One late key inside a scan does not split it; a pause this long does.
    var split = Math.max(200, 4 * gap);
    // run is the latest keys: their characters and times, and el, the text field
    // they went to (null for keys held back).
    var run = null;

    function stamp(ev) { return ev.timeStamp || window.performance.now(); }
    var notText = { button: 1, submit: 1, reset: 1, checkbox: 1, radio: 1, image: 1, file: 1, hidden: 1, range: 1, color: 1 };
    function textEntry(el) {
      if (!el || !el.tagName) { return false; }
      if (el.isContentEditable || el.tagName === "TEXTAREA") { return true; }
      return el.tagName === "INPUT" && !notText[(el.getAttribute("type") || "text").toLowerCase()];
    }
    function add(key, t, el) {
      if (!run || run.el !== el || t - run.times[run.times.length - 1] > pause || run.keys.length >= 200) {
        run = { keys: [], times: [], el: el };
      }
      run.keys.push(key);
      run.times.push(t);
    }
    function recent(t, el) {
      return run !== null && run.el === el && t - run.times[run.times.length - 1] <= pause;
    }
    // scanned returns the keys of a scanner's run that an Enter at t ends: the
    // longest run of the latest keys whose average gap is within the scanner's,
    // if it has at least min keys; "" if the Enter is a person's.
    function scanned(t, el, min) {
      if (!recent(t, el)) { return ""; }
      var n = run.keys.length;
      var best = 0;
      for (var k = 1; k <= n; k++) {
        // A pause longer than split between two keys ends the run: a person's
        // typing or a stray key before it is no part of the scan, however fast
        // the scan's own keys came.
        if (k > 1 && run.times[n - k + 1] - run.times[n - k] > split) { break; }
        if ((t - run.times[n - k]) / k <= gap) { best = k; }
      }
      return best >= min ? run.keys.slice(n - best).join("") : "";
    }
    function scan(keys) {
      field.value = keys;
      field.focus();
      if (form.requestSubmit) {
        form.requestSubmit();
      } else {
        form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
      }
    }
    function consume(ev) {
      ev.preventDefault();
      ev.stopImmediatePropagation();
    }

    // A click or a tap is a person's: keys held back before it are not a scan.
    window.addEventListener("pointerdown", function () { run = null; }, true);
    window.addEventListener("keydown", function (ev) {
      var key = ev.key || "";
      if (key === "Shift") { return; } // a scanner's capitals
      if (ev.ctrlKey || ev.altKey || ev.metaKey || ev.isComposing || ev.repeat) {
        run = null;
        return;
      }
      var el = ev.target;
      var t = stamp(ev);
      var printable = key.length === 1;
      var keys;

      if (el === field) {
        if (recent(t, null)) {
          // The rest of a scan whose start was held back: that goes first.
          field.value += run.keys.join("");
        }
        run = null;
        return;
      }

      if (textEntry(el)) {
        if (printable) {
          add(key, t, el);
          return;
        }
        keys = key === "Enter" && (el.tagName === "INPUT" || el.tagName === "TEXTAREA") ? scanned(t, el, 4) : "";
        run = null;
        var end = el.selectionEnd;
        if (keys && typeof end === "number" && el.selectionStart === end && el.value.slice(end - keys.length, end) === keys) {
          consume(ev);
          el.value = el.value.slice(0, end - keys.length) + el.value.slice(end);
          scan(keys);
          el.focus();
          el.setSelectionRange(end - keys.length, end - keys.length);
        }
        return;
      }

      if (printable) {
        if (key === " " && !(recent(t, null) && t - run.times[run.times.length - 1] <= gap)) {
          run = null; // a person's Space: it presses the focused button
          return;
        }
        consume(ev);
        add(key, t, null);
        return;
      }
      keys = key === "Enter" ? scanned(t, null, 1) : "";
      var held = key === "Enter" && recent(t, null) ? run.keys.length : 0;
      run = null;
      if (keys) {
        consume(ev);
        scan(keys);
      } else if (held >= 3) {
        // Characters then Enter, slower than a scanner: a scanner slower than
        // the workstation's gap, or keys typed on a button. Either way the Enter
        // presses nothing (it might confirm or follow a link nobody meant to):
        // the keys go, the error sound says so, and the scan field takes the
        // focus for the scan to be tried again.
        consume(ev);
        field.focus();
        play("error");
      }
    }, true);
  }
})();
