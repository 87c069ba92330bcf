;;; contextls-sync.el --- Keep the server's copy of the buffers that hold items  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; A buffer whose file has an item in the window is open on the server
;; (`textDocument/didOpen'): its text, unsaved edits included, is what the
;; item renders and follows.  A buffer that holds no item is not: it is
;; opened right before something is added from it, and closed again when
;; the add is refused or its last item leaves the window.
;;
;; Typing costs nothing but bookkeeping: the change hooks only widen a span
;; (two markers) around what changed since the last send, with the text it
;; replaced.  Positions are converted to LSP's lines and UTF-16 columns once
;; per burst of typing, when it is sent (a moment after typing stops, or
;; right before the next request): one change for the span, or a few when
;; the edits were far apart.  Sending is a notification: Emacs never waits
;; for the server.
;;
;; When the connection goes (a restart, a crash, `contextls daemon stop'),
;; each of these buffers is opened again, with its whole text, on the new one.

;;; Code:

(require 'contextls-client)

(defcustom contextls-change-delay 0.3
  "Seconds of idleness after an edit before the server is told of it."
  :type 'number
  :group 'contextls)

(defconst contextls--far-apart 4096
  "Edits further apart than this many characters are changes of their own.")

;;; Positions

(defvar-local contextls--astral nil
  "Whether the buffer has characters above U+FFFF: t, `none', or nil (unknown).
Without them, a UTF-16 column is a character column.")

(defconst contextls--astral-regexp "[^\0-\uFFFF]"
  "A character that takes two UTF-16 code units.")

(defun contextls--utf16-length (string)
  "How many UTF-16 code units STRING takes."
  (let ((n (length string)) (start 0))
    (while (setq start (string-match contextls--astral-regexp string start))
      (setq n (1+ n) start (1+ start)))
    n))

(defun contextls--astral-p (beg end)
  "Return non-nil if a character above U+FFFF is between BEG and END."
  (save-excursion
    (goto-char beg)
    (skip-chars-forward "\0-\uFFFF" end)
    (< (point) end)))

(defun contextls--note-astral (beg end)
  "Remember if a character above U+FFFF is in BEG..END, just inserted."
  (when (and (eq contextls--astral 'none) (contextls--astral-p beg end))
    (setq contextls--astral t)))

(defun contextls--lsp-position (pos)
  "POS as an LSP position plist: 0-based line and UTF-16 character."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (let* ((bol (line-beginning-position))
             (column (- pos bol)))
        (unless (eq contextls--astral 'none)
          (goto-char bol)
          (while (progn (skip-chars-forward "\0-\uFFFF" pos) (< (point) pos))
            (setq column (1+ column))
            (forward-char 1)))
        (list :line (1- (line-number-at-pos pos t)) :character column)))))

(defun contextls--position-after (start text)
  "The LSP position after TEXT when it begins at the LSP position START."
  (let ((newline (cl-position ?\n text :from-end t)))
    (if newline
        (list :line (+ (plist-get start :line) (cl-count ?\n text))
              :character (contextls--utf16-length (substring text (1+ newline))))
      (list :line (plist-get start :line)
            :character (+ (plist-get start :character) (contextls--utf16-length text))))))

(defun contextls--range (beg end)
  "The LSP range from BEG to END."
  (list :start (contextls--lsp-position beg) :end (contextls--lsp-position end)))

(defun contextls--language ()
  "The current buffer's language, from its major mode."
  (string-remove-suffix "-ts" (string-remove-suffix "-mode" (symbol-name major-mode))))

;;; The state of a buffer

(defvar-local contextls--synced nil
  "The connection that has this buffer open, or nil.")
(put 'contextls--synced 'permanent-local t)

(defvar-local contextls--sync-root nil
  "The root this buffer is kept in sync with; it outlives connections.")
(put 'contextls--sync-root 'permanent-local t)

(defvar-local contextls--doc-version 0
  "Version of this buffer's text as last sent.")
(put 'contextls--doc-version 'permanent-local t)

(defvar-local contextls--adding nil
  "Non-nil while something is being added from this buffer: it stays open.")

(defvar-local contextls--span nil
  "What changed since the last send: nil, `all', or [START END OLD DELTA].
START and END are markers around everything that changed; OLD is the text
they held before; DELTA the characters the edits added (or, if negative,
took away).")
(put 'contextls--span 'permanent-local t)

(defvar-local contextls--queued nil
  "Changes converted but not sent yet, newest first.")
(put 'contextls--queued 'permanent-local t)

(defvar-local contextls--change-timer nil
  "Pending timer that sends this buffer's changes.")

(defun contextls--buffer-text ()
  "The whole text of the current buffer."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

;;; Opening and closing

(defun contextls--sync (&optional root)
  "Make sure the server of ROOT has the current file buffer open, as it is now."
  (when buffer-file-name
    (let* ((root (or root (contextls--root)))
           (conn (contextls--connection root)))
      (unless (eq contextls--synced conn)
        (contextls--open conn root)))))

(defun contextls--open (conn root)
  "Open the current buffer on CONN (the connection of ROOT) with its whole text."
  (contextls--drop-changes)
  (setq contextls--synced conn contextls--sync-root root contextls--doc-version 1)
  (setq contextls--astral (if (contextls--astral-p (point-min) (point-max)) t 'none))
  (contextls--notify conn :textDocument/didOpen
                  (list :textDocument
                        (list :uri (contextls--uri buffer-file-name)
                              :languageId (contextls--language)
                              :version 1
                              :text (contextls--buffer-text))))
  (add-hook 'before-change-functions #'contextls--before-change nil t)
  (add-hook 'after-change-functions #'contextls--after-change nil t)
  (add-hook 'after-revert-hook #'contextls--after-revert nil t)
  (add-hook 'kill-buffer-hook #'contextls--did-close nil t))

(defun contextls--drop-changes ()
  "Forget what was not sent: the whole buffer is sent next, or nothing."
  (when contextls--change-timer (cancel-timer contextls--change-timer))
  (when (vectorp contextls--span)
    (set-marker (aref contextls--span 0) nil)
    (set-marker (aref contextls--span 1) nil))
  (setq contextls--span nil contextls--queued nil contextls--change-timer nil))

(defun contextls--buffer-connection ()
  "The connection this buffer is open on, if it is still running."
  (and contextls--synced (jsonrpc-running-p contextls--synced)
       (let ((window (contextls--window-of contextls--sync-root)))
         (and window (eq (contextls--window-connection window) contextls--synced)))
       contextls--synced))

(defun contextls--did-close ()
  "Tell the server this buffer is closed, and stop following its edits."
  (let ((conn (contextls--buffer-connection)))
    (when (and conn buffer-file-name)
      (contextls--notify conn :textDocument/didClose
                      (list :textDocument (list :uri (contextls--uri buffer-file-name))))))
  (contextls--drop-changes)
  (remove-hook 'before-change-functions #'contextls--before-change t)
  (remove-hook 'after-change-functions #'contextls--after-change t)
  (remove-hook 'after-revert-hook #'contextls--after-revert t)
  (remove-hook 'kill-buffer-hook #'contextls--did-close t)
  (setq contextls--synced nil contextls--sync-root nil))

(defun contextls--after-revert ()
  "The buffer was read again from its file: send it whole."
  (when contextls--synced
    (contextls--drop-changes)
    (setq contextls--astral (if (contextls--astral-p (point-min) (point-max)) t 'none))
    (setq contextls--span 'all)
    (contextls--send-changes (current-buffer))))

(defun contextls--buffers-of (root)
  "The live file buffers kept in sync with ROOT."
  (seq-filter (lambda (buffer)
                (and (buffer-file-name buffer)
                     (equal (buffer-local-value 'contextls--sync-root buffer) root)))
              (buffer-list)))

(defun contextls--held-buffers (root)
  "The buffers visiting a file that has an item in ROOT's window."
  (let ((paths (make-hash-table :test #'equal)) held)
    (dolist (item (contextls--items root))
      (when-let ((path (plist-get (plist-get item :metadata) :path)))
        (puthash path t paths)))
    ;; Once per file, not per item: finding a file's buffer asks for its truename.
    (maphash (lambda (path _)
               (when-let ((buffer (find-buffer-visiting (expand-file-name path root))))
                 (push buffer held)))
             paths)
    held))

(defun contextls--sync-window-buffers (root)
  "Keep open on ROOT's server the buffers holding an item of ROOT's window.
Only them: a buffer something is being added from stays open until the add
is answered, the others are closed."
  (let* ((held (contextls--held-buffers root))
         (window (contextls--window-of root))
         (conn (and window (contextls--window-connection window))))
    (when (and conn (eq (contextls--state conn) 'ready) (jsonrpc-running-p conn))
      (dolist (buffer held)
        (with-current-buffer buffer
          (unless (eq contextls--synced conn) (contextls--open conn root)))))
    (dolist (buffer (contextls--buffers-of root))
      (unless (or (memq buffer held) (buffer-local-value 'contextls--adding buffer))
        (with-current-buffer buffer (contextls--did-close))))))

(defun contextls--add-from-buffer (root add)
  "Call ADD, an add from the current buffer, with the buffer open on ROOT's server.
The buffer is closed again unless it holds an item afterwards: a refused add
leaves nothing open."
  (let ((buffer (current-buffer)))
    (contextls--sync root)
    (setq contextls--adding t)
    (unwind-protect (funcall add)
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (setq contextls--adding nil)
          (unless (memq buffer (contextls--held-buffers root))
            (contextls--did-close)))))))

(defun contextls--sync-visited-file ()
  "Open the file just visited on its server, if it has an item in the window."
  (let ((root (contextls--root)))
    (when (contextls--items root)
      (contextls--sync-window-buffers root))))

(defun contextls--reopen-buffers (root conn)
  "Open every buffer kept in sync with ROOT on its new connection CONN."
  (dolist (buffer (contextls--buffers-of root))
    (with-current-buffer buffer
      (unless (eq contextls--synced conn)
        (contextls--open conn root)))))

(defun contextls--forget-connection (root)
  "ROOT's connection went: its buffers are opened again on the next one."
  (dolist (buffer (contextls--buffers-of root))
    (with-current-buffer buffer
      (contextls--drop-changes)
      (setq contextls--synced nil))))

;;; Changes

(defun contextls--new-span (beg end)
  "A span around BEG..END, about to change."
  (vector (copy-marker beg) (copy-marker end t) (buffer-substring-no-properties beg end) 0))

(defun contextls--before-change (beg end)
  "Widen the span of what changed to hold BEG..END, which is about to change."
  (when contextls--synced
    (let ((span contextls--span))
      (cond
       ((eq span 'all))
       ((null span) (setq contextls--span (contextls--new-span beg end)))
       ((or (> (- (aref span 0) end) contextls--far-apart)
            (> (- beg (aref span 1)) contextls--far-apart))
        (contextls--queue-span)
        (setq contextls--span (contextls--new-span beg end)))
       (t
        (let ((start (aref span 0)) (stop (aref span 1)))
          (when (< beg start)
            (aset span 2 (concat (buffer-substring-no-properties beg start) (aref span 2)))
            (set-marker start beg))
          (when (> end stop)
            (aset span 2 (concat (aref span 2) (buffer-substring-no-properties stop end)))
            (set-marker stop end))))))))

(defun contextls--after-change (beg end old-length)
  "Note the edit that made BEG..END of OLD-LENGTH; send it when typing stops.
Some commands change text outside the place they announced before: an
insertion there still joins the span (the text between did not change);
anything else sends the whole text."
  (when contextls--synced
    (let ((span contextls--span))
      (when (null span)                 ; the edit was not announced before it
        (setq contextls--span 'all))
      (when (vectorp span)
        (aset span 3 (+ (aref span 3) (- end beg) (- old-length)))
        (unless (and (or (and (<= (aref span 0) beg) (<= end (aref span 1)))
                         (and (zerop old-length) (contextls--join-insertion span beg end)))
                     (= (- (aref span 1) (aref span 0))
                        (+ (length (aref span 2)) (aref span 3))))
          (contextls--drop-changes)
          (setq contextls--span 'all))))
    (when (> end beg) (contextls--note-astral beg end))
    (unless (and contextls--change-timer (memq contextls--change-timer timer-idle-list))
      (setq contextls--change-timer
            (run-with-idle-timer contextls-change-delay nil #'contextls--send-changes
                                 (current-buffer))))))

(defun contextls--join-insertion (span beg end)
  "Widen SPAN to hold the text BEG..END, inserted outside it; nil if too far."
  (let ((start (aref span 0)) (stop (aref span 1)))
    (cond ((and (<= end start) (<= (- start end) contextls--far-apart))
           (aset span 2 (concat (buffer-substring-no-properties end start) (aref span 2)))
           (set-marker start beg))
          ((and (>= beg stop) (<= (- beg stop) contextls--far-apart))
           (aset span 2 (concat (aref span 2) (buffer-substring-no-properties stop beg)))
           (set-marker stop end)))))

(defun contextls--span-change (span)
  "SPAN as one LSP change of the text as it was before it."
  (let* ((start (contextls--lsp-position (aref span 0)))
         (old (aref span 2)))
    (list :range (list :start start :end (contextls--position-after start old))
          :text (buffer-substring-no-properties (aref span 0) (aref span 1)))))

(defun contextls--queue-span ()
  "Convert the span to a change now (edits elsewhere come next), and forget it."
  (let ((span contextls--span))
    (push (contextls--span-change span) contextls--queued)
    (set-marker (aref span 0) nil)
    (set-marker (aref span 1) nil)
    (setq contextls--span nil)))

(defun contextls--send-changes (buffer)
  "Send what changed in BUFFER, in one `didChange', without waiting."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when contextls--change-timer (cancel-timer contextls--change-timer))
      (setq contextls--change-timer nil)
      (let ((conn (contextls--buffer-connection))
            (changes (cond ((eq contextls--span 'all)
                            (list (list :text (contextls--buffer-text))))
                           (t (when (vectorp contextls--span) (contextls--queue-span))
                              (reverse contextls--queued)))))
        (setq contextls--span nil contextls--queued nil)
        (when (and conn changes)
          (setq contextls--doc-version (1+ contextls--doc-version))
          (contextls--notify conn :textDocument/didChange
                          (list :textDocument (list :uri (contextls--uri buffer-file-name)
                                                    :version contextls--doc-version)
                                :contentChanges (vconcat changes))))))))

(defun contextls--flush-changes (root)
  "Send every change of ROOT's buffers now: a request comes next.
Buffers that hold an item and are not open on the server yet (it just
started again) are opened first, with their whole text."
  (contextls--sync-window-buffers root)
  (dolist (buffer (contextls--buffers-of root))
    (when (or (buffer-local-value 'contextls--span buffer)
              (buffer-local-value 'contextls--queued buffer))
      (contextls--send-changes buffer))))

(add-hook 'contextls-connected-functions #'contextls--reopen-buffers)
(add-hook 'contextls-disconnected-functions #'contextls--forget-connection)
(add-hook 'contextls-before-request-functions #'contextls--flush-changes)
(add-hook 'contextls-window-change-functions #'contextls--sync-window-buffers)
(add-hook 'find-file-hook #'contextls--sync-visited-file)

(provide 'contextls-sync)
;;; contextls-sync.el ends here
