;;; contextls-highlight.el --- Highlight the regions that are in the context window  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Every region item of a window is highlighted in the buffers visiting its
;; file, with a wave underline when its text changed since it was added.
;; Overlays are keyed by root and id (ids are numbered per workspace, so two
;; projects both have a ctx-1), and only the items whose place or state
;; changed are drawn again.  A buffer showing an item is kept in sync with
;; the server (contextls-sync.el), so its edits move and mark the item there
;; too.

;;; Code:

(require 'contextls-client)
(require 'contextls-sync)

(defface contextls-region
  '((t :inherit secondary-selection :extend t))
  "Face of regions that are in the context window."
  :group 'contextls)

(defface contextls-stale-region
  '((t :inherit contextls-region :underline (:style wave :color "orange")))
  "Face of regions in the window whose text has changed since they were added."
  :group 'contextls)

(defvar contextls--overlays (make-hash-table :test #'equal)
  "What highlights each item: (ROOT . ID) -> (SIGNATURE . OVERLAYS).
The signature is what the overlays were drawn from: path, lines, staleness.")

(defun contextls--overlays-of (root id)
  "The live overlays of item ID of ROOT."
  (seq-filter #'overlay-buffer (cdr (gethash (cons root id) contextls--overlays))))

(defun contextls--delete-overlays (root id)
  "Delete the overlays of item ID of ROOT."
  (mapc #'delete-overlay (cdr (gethash (cons root id) contextls--overlays)))
  (remhash (cons root id) contextls--overlays))

(defun contextls--region-item-p (item)
  "Whether ITEM is a region of a file, to be highlighted."
  (let ((meta (plist-get item :metadata)))
    (and (equal (plist-get item :kind) "code") (plist-get meta :path)
         (plist-get meta :startLine) (plist-get meta :endLine))))

(defun contextls--signature (item)
  "Where ITEM's highlight is drawn: its path and lines, as the server has them.
While they stay the same, the overlay stays where the buffer's edits moved
it (the server may not have heard of them yet, or may not be able to tell)."
  (let ((meta (plist-get item :metadata)))
    (list (plist-get meta :path) (plist-get meta :startLine) (plist-get meta :endLine))))

(defun contextls--update-overlays (root)
  "Draw ROOT's window items in the buffers of their files, as they are now."
  (let ((wanted (make-hash-table :test #'equal))
        (buffers (make-hash-table :test #'equal)))
    (dolist (item (contextls--items root))
      (when (contextls--region-item-p item)
        (puthash (plist-get item :id) item wanted)))
    (let (gone)
      (maphash (lambda (key _) (when (and (equal (car key) root) (not (gethash (cdr key) wanted)))
                                 (push (cdr key) gone)))
               contextls--overlays)
      (dolist (id gone) (contextls--delete-overlays root id)))
    (maphash
     (lambda (id item)
       (let ((signature (contextls--signature item))
             (known (gethash (cons root id) contextls--overlays)))
         (if (and known (equal (car known) signature)
                  (cdr known) (seq-every-p #'overlay-buffer (cdr known)))
             (mapc (lambda (overlay) (contextls--dress-overlay overlay item)) (cdr known))
           (contextls--delete-overlays root id)
           (let* ((path (car signature))
                  (buffer (gethash path buffers 'unknown)))
             (when (eq buffer 'unknown)
               (setq buffer (find-buffer-visiting (expand-file-name path root)))
               (puthash path buffer buffers))
             (when buffer
               (with-current-buffer buffer
                 (puthash (cons root id)
                          (cons signature (list (contextls--make-overlay item root)))
                          contextls--overlays)))))))
     wanted)))

(defun contextls--make-overlay (item root)
  "An overlay over the lines of ITEM of ROOT in this buffer."
  (let* ((meta (plist-get item :metadata))
         (start-line (plist-get meta :startLine))
         (end-line (plist-get meta :endLine)))
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (forward-line (1- start-line))
        (let ((beg (point)))
          (forward-line (1+ (- end-line start-line)))
          (let ((overlay (make-overlay beg (point) nil t nil)))
            (overlay-put overlay 'contextls-id (plist-get item :id))
            (overlay-put overlay 'contextls-root root)
            (overlay-put overlay 'before-string
                         (propertize " " 'display '(left-fringe right-triangle)))
            (contextls--dress-overlay overlay item)
            overlay))))))

(defun contextls--dress-overlay (overlay item)
  "Give OVERLAY the face and help of ITEM as it is now (stale or not).
Only when they changed: every change of the window comes here for every item."
  (let ((stale (eq (plist-get item :stale) t))
        (dress (list (plist-get item :stale) (plist-get item :tokens) (plist-get item :label)
                     (plist-get (plist-get item :metadata) :staleReason)
                     (plist-get item :view))))
    (unless (equal dress (overlay-get overlay 'contextls-dress))
      (overlay-put overlay 'contextls-dress dress)
      (contextls--dress-overlay-now overlay item stale))))

(defun contextls--dress-overlay-now (overlay item stale)
  "Give OVERLAY the face and help of ITEM, STALE or not."
  (overlay-put overlay 'face (if stale 'contextls-stale-region 'contextls-region))
  (overlay-put overlay 'help-echo
               (format "contextls: %s%s" (contextls--describe item)
                       (cond ((equal (plist-get (plist-get item :metadata) :staleReason)
                                     "lost")
                              ", changed, and so did the lines around it")
                             (stale ", changed since it was added")
                             (t "")))))

(defun contextls--item-at (&optional pos)
  "The item highlighted at POS (point): (ROOT . ID), or nil."
  (seq-some (lambda (overlay)
              (when-let ((id (overlay-get overlay 'contextls-id)))
                (cons (overlay-get overlay 'contextls-root) id)))
            (overlays-at (or pos (point)))))

(defun contextls--highlight-visited-file ()
  "Highlight the items of the file just visited."
  (let ((root (contextls--root)))
    (when (contextls--items root)
      (contextls--update-overlays root))))

(defun contextls--unhighlight-stopped (root)
  "Delete the overlays of ROOT when it is no longer served (as asked).
After a crash they stay: the window is still there, and served again soon."
  (unless (contextls--window-of root)
    (let (ids)
      (maphash (lambda (key _) (when (equal (car key) root) (push (cdr key) ids)))
               contextls--overlays)
      (dolist (id ids) (contextls--delete-overlays root id)))))

(add-hook 'contextls-window-change-functions #'contextls--update-overlays)
(add-hook 'contextls-disconnected-functions #'contextls--unhighlight-stopped)
(add-hook 'find-file-hook #'contextls--highlight-visited-file)

(provide 'contextls-highlight)
;;; contextls-highlight.el ends here
