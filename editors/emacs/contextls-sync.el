;;; contextls-sync.el --- Keep the server's copy of open buffers current  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; A buffer that something was added from, or that shows an item, is open on
;; the server (`textDocument/didOpen'): its text, unsaved edits included, is
;; what regions are taken from and followed in.  Edits are sent as
;; incremental changes (LSP's TextDocumentSyncKind.Incremental): each edit's
;; range as it was before the edit, and its new text, sent a moment after
;; typing stops, or right before the next request.  Sending is a notification:
;; Emacs never waits for the server.
;;
;; When the connection goes (a restart, a crash, `contextls daemon stop'),
;; each of these buffers is opened again, with its whole text, on the new one.

;;; Code:

(require 'contextls-client)

(defcustom contextls-change-delay 0.3
  "Seconds to wait after an edit before telling the server of it."
  :type 'number
  :group 'contextls)

;;; Positions

(defun contextls--utf16-length (string)
  "How many UTF-16 code units STRING takes."
  (let ((n (length string)))
    (dotimes (i (length string))
      (when (> (aref string i) #xFFFF) (setq n (1+ n))))
    n))

(defun contextls--lsp-position (pos)
  "POS as an LSP position plist: 0-based line and UTF-16 character."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t))
            :character (contextls--utf16-length
                        (buffer-substring-no-properties (line-beginning-position) pos))))))

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

(defvar-local contextls--version 0
  "Version of this buffer's text as last sent.")
(put 'contextls--version 'permanent-local t)

(defvar-local contextls--pending nil
  "Changes not sent yet, newest first: LSP change events, or `all'.")
(put 'contextls--pending 'permanent-local t)

(defvar-local contextls--before-change nil
  "The edit under way: (START-POSITION END-POSITION BEG-MARKER END-MARKER).
Its LSP range as it was before the edit, and markers that follow it.")

(defvar-local contextls--change-timer nil
  "Pending timer that sends this buffer's changes.")

(defun contextls--buffer-text ()
  "The whole text of the current buffer."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

;;; Opening and closing

(defun contextls--sync (&optional root)
  "Make sure the server of ROOT has the current file buffer open, as it is now."
  (when buffer-file-name
    (let ((conn (contextls--connection (or root (contextls--root)))))
      (unless (eq contextls--synced conn)
        (contextls--open conn (or root (contextls--root)))))))

(defun contextls--open (conn root)
  "Open the current buffer on CONN, the connection of ROOT, with its whole text."
  (when contextls--change-timer (cancel-timer contextls--change-timer))
  (setq contextls--synced conn contextls--sync-root root contextls--version 1
        contextls--pending nil contextls--change-timer nil)
  (jsonrpc-notify conn :textDocument/didOpen
                  (list :textDocument
                        (list :uri (contextls--uri buffer-file-name)
                              :languageId (contextls--language)
                              :version 1
                              :text (contextls--buffer-text))))
  (add-hook 'before-change-functions #'contextls--before-change nil t)
  (add-hook 'after-change-functions #'contextls--after-change nil t)
  (add-hook 'after-revert-hook #'contextls--after-revert nil t)
  (add-hook 'kill-buffer-hook #'contextls--did-close nil t))

(defun contextls--live-connection ()
  "The connection this buffer is open on, if it is still running."
  (and contextls--synced (jsonrpc-running-p contextls--synced)
       (eq contextls--synced (gethash contextls--sync-root contextls--connections))
       contextls--synced))

(defun contextls--did-close ()
  "Tell the server this buffer is closed."
  (let ((conn (contextls--live-connection)))
    (when (and conn buffer-file-name)
      (jsonrpc-notify conn :textDocument/didClose
                      (list :textDocument (list :uri (contextls--uri buffer-file-name))))))
  (when contextls--change-timer (cancel-timer contextls--change-timer))
  (setq contextls--synced nil contextls--sync-root nil contextls--pending nil))

(defun contextls--after-revert ()
  "The buffer was read again from its file: send it whole."
  (when contextls--synced
    (setq contextls--pending (list 'all))
    (contextls--send-changes (current-buffer))))

(defun contextls--buffers-of (root)
  "The live file buffers kept in sync with ROOT."
  (seq-filter (lambda (buffer)
                (and (buffer-file-name buffer)
                     (equal (buffer-local-value 'contextls--sync-root buffer) root)))
              (buffer-list)))

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
      (when contextls--change-timer (cancel-timer contextls--change-timer))
      (setq contextls--synced nil contextls--pending nil contextls--change-timer nil))))

;;; Changes

(defun contextls--before-change (beg end)
  "Note the LSP range of the edit from BEG to END, before it happens."
  (when contextls--synced
    (pcase-let ((`(,_ ,_ ,old-start ,old-stop) contextls--before-change))
      (when old-start (set-marker old-start nil) (set-marker old-stop nil)))
    (let ((start (copy-marker beg)) (stop (copy-marker end t)))
      (setq contextls--before-change
            (list (contextls--lsp-position beg) (contextls--lsp-position end) start stop)))))

(defun contextls--after-change (beg end old-length)
  "Queue the edit that made BEG..END of OLD-LENGTH; send it when typing stops."
  (when contextls--synced
    (pcase-let ((`(,start ,stop ,beg-marker ,end-marker) contextls--before-change))
      (setq contextls--before-change nil)
      ;; The change is the text now between the markers of the region the
      ;; edit announced (some commands, `capitalize-word' or `fill-paragraph',
      ;; announce more than they touch).  When that region does not hold the
      ;; edit (`transpose-lines' may announce another place), an insertion is
      ;; still known: the text before it did not change.  Else the whole
      ;; text goes.
      (push (cond ((and beg-marker (<= beg-marker beg) (<= end end-marker))
                   (list :range (list :start start :end stop)
                         :text (buffer-substring-no-properties beg-marker end-marker)))
                  ((zerop old-length)
                   (let ((at (contextls--lsp-position beg)))
                     (list :range (list :start at :end at)
                           :text (buffer-substring-no-properties beg end))))
                  (t 'all))
            contextls--pending)
      (when beg-marker (set-marker beg-marker nil) (set-marker end-marker nil))))
  (when contextls--synced
    (when contextls--change-timer (cancel-timer contextls--change-timer))
    (setq contextls--change-timer
          (run-with-idle-timer contextls-change-delay nil #'contextls--send-changes
                               (current-buffer)))))

(defun contextls--send-changes (buffer)
  "Send what was queued for BUFFER, in one `didChange', without waiting."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when contextls--change-timer (cancel-timer contextls--change-timer))
      (setq contextls--change-timer nil)
      (let ((conn (contextls--live-connection))
            (changes (reverse contextls--pending)))
        (setq contextls--pending nil)
        (when (and conn changes)
          (setq contextls--version (1+ contextls--version))
          (jsonrpc-notify conn :textDocument/didChange
                          (list :textDocument (list :uri (contextls--uri buffer-file-name)
                                                    :version contextls--version)
                                :contentChanges
                                (if (memq 'all changes)
                                    (vector (list :text (contextls--buffer-text)))
                                  (vconcat changes)))))))))

(defun contextls--flush-changes (root)
  "Send every queued change of ROOT's buffers now: a request comes next."
  (dolist (buffer (contextls--buffers-of root))
    (when (buffer-local-value 'contextls--pending buffer)
      (contextls--send-changes buffer))))

(add-hook 'contextls-connected-functions #'contextls--reopen-buffers)
(add-hook 'contextls-disconnected-functions #'contextls--forget-connection)
(add-hook 'contextls-before-request-functions #'contextls--flush-changes)

(provide 'contextls-sync)
;;; contextls-sync.el ends here
