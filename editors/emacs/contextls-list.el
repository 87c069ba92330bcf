;;; contextls-list.el --- The inspector: the items of a context window  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; `contextls-list' shows the window of the current project, newest first,
;; as a `tabulated-list-mode' buffer: the column headers in the header line,
;; the budget above the table.  `n' and `p' move as in every such list; `P'
;; pins or unpins, `d' marks for removal and `x' removes what is marked.
;; The table follows the window as it changes.

;;; Code:

(require 'tabulated-list)
(require 'contextls-client)
(require 'contextls-mode-line)

(declare-function contextls-search "contextls" (query &optional mode))
(declare-function contextls-copy "contextls" ())
(declare-function contextls-reread "contextls" (&optional ids root))
(declare-function contextls-forget "contextls" (id &optional query root))
(declare-function contextls-set-view "contextls" (id view &optional root))
(declare-function contextls-set-model "contextls" (model &optional root))

(defvar-local contextls--list-root nil
  "The project root this inspector shows.")

(defun contextls--id-number (entry)
  "The number of the id of the inspector's ENTRY: 12 for ctx-12."
  (string-to-number (replace-regexp-in-string "\\`[^0-9]*" "" (car entry))))

(defun contextls--entry-tokens (entry)
  "The tokens of the inspector's ENTRY, as a number."
  (string-to-number (replace-regexp-in-string "," "" (aref (cadr entry) 4))))

(defun contextls--sort-by (key)
  "A `tabulated-list' sort predicate on the number KEY gives of each entry."
  (lambda (a b) (< (funcall key a) (funcall key b))))

(defvar contextls-list-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'contextls-list-visit)
    (define-key map "P" #'contextls-list-toggle-pin)
    (define-key map "d" #'contextls-list-mark-delete)
    (define-key map "u" #'contextls-list-unmark)
    (define-key map "x" #'contextls-list-execute)
    (define-key map "g" #'contextls-list-refresh)
    (define-key map "f" #'contextls-list-reread)
    (define-key map "F" #'contextls-list-forget)
    (define-key map "s" #'contextls-search)
    (define-key map "c" #'contextls-copy)
    (define-key map "e" #'contextls-list-expand)
    (define-key map "o" #'contextls-list-outline)
    (define-key map "M" #'contextls-set-model)
    map)
  "Keys of the contextls inspector.")

(define-derived-mode contextls-list-mode tabulated-list-mode "contextls"
  "The items in the context window, newest first.
\\<contextls-list-mode-map>
\\[contextls-list-visit] visits an item.
\\[contextls-list-toggle-pin] pins or unpins it.
\\[contextls-list-mark-delete] marks it for removal, \\[contextls-list-unmark] unmarks it.
\\[contextls-list-execute] removes the marked ones.
\\[contextls-list-refresh] reads the window again.
\\[contextls-list-reread] reads a stale item again from its file.
\\[contextls-list-forget] forgets an item for good.
\\[contextls-search] searches the archive.
\\[contextls-copy] copies the rendered context.
\\[contextls-list-expand] shows an outlined item whole, \\[contextls-list-outline] as its outline.
\\[contextls-set-model] chooses the model the window counts for.
\\[next-line] and \\[previous-line] move, as in every list."
  (setq tabulated-list-format `[("Id" 8 ,(contextls--sort-by #'contextls--id-number))
                                ("Kind" 12 t) ("View" 10 t) ("Label" 50 t)
                                ("Tokens" 8 ,(contextls--sort-by #'contextls--entry-tokens)
                                 :right-align t)
                                ("Flags" 6 t)])
  (setq tabulated-list-padding 2)
  (tabulated-list-init-header))

;;;###autoload (autoload 'contextls-list "contextls" "Inspect the items in the context window of this project." t)
(defun contextls-list ()
  "Inspect the items in the context window of this project."
  (interactive)
  (let ((root (contextls--root)))
    (contextls--read-window root)
    (let ((buffer (get-buffer-create "*contextls*")))
      (with-current-buffer buffer
        (contextls-list-mode)
        (setq contextls--list-root root)
        (setq default-directory (file-name-as-directory root))
        (contextls--fill-inspector))
      (pop-to-buffer buffer)
      buffer)))

(defun contextls--read-window (root)
  "Read ROOT's items and status now."
  (contextls--set-items root (contextls--list
                             (plist-get (contextls--request :contextls/list
                                                            (contextls--workspace-params root)
                                                            root)
                                        :items)))
  (contextls--request :contextls/status (contextls--workspace-params root) root))

(defun contextls--budget-bar (status)
  "A text bar of STATUS's token budget."
  (let* ((width 20)
         (full (min width (round (* width (/ (plist-get status :percent) 100.0))))))
    (concat "[" (make-string full ?█) (make-string (- width full) ?░) "]")))

(defun contextls--budget-line (status)
  "The line above the table, for STATUS."
  (if (consp status)
      (let ((next (plist-get status :nextEviction))
            (reason (contextls--budget-reason status)))
        (format " %s %s/%s tokens of %s · %s/%s items%s%s%s\n"
                (contextls--budget-bar status)
                (contextls--kilo (plist-get status :tokens))
                (contextls--kilo (contextls--budget status))
                (contextls--model-words status)
                (contextls--number (plist-get status :itemCount))
                (contextls--number (plist-get status :maxItems))
                (let ((views (contextls--view-counts status))) (if views (format " (%s)" views) ""))
                (if reason (format " · %s" reason) "")
                (if next (format " · next out: %s" (contextls--describe next)) "")))
    " contextls: no status yet\n"))

(defun contextls--fill-inspector ()
  "Fill the inspector from the last items and status of its root."
  (let ((root contextls--list-root))
    (setq tabulated-list-entries
          (mapcar (lambda (item)
                    (list (plist-get item :id)
                          (vector (plist-get item :id)
                                  (plist-get item :kind)
                                  (contextls--view item)
                                  (plist-get item :label)
                                  (contextls--number (plist-get item :tokens))
                                  (concat (if (eq (plist-get item :pinned) t) "P" "")
                                          (if (eq (plist-get item :stale) t) "S" "")))))
                  (reverse (contextls--items root))))
    ;; A refill comes with every change of the window, maybe another
    ;; process's: the marks a person has set stay.
    (let ((marked (contextls--marked-ids)))
      (tabulated-list-print t)
      (when marked
        (save-excursion
          (goto-char (point-min))
          (while (not (eobp))
            (if (member (tabulated-list-get-id) marked)
                (tabulated-list-put-tag "D" t)
              (forward-line 1))))))
    (let ((overlay (contextls--budget-overlay)))
      (move-overlay overlay (point-min) (point-min))
      (overlay-put overlay 'before-string
                   (contextls--budget-line (contextls--status root))))))

(defun contextls--budget-overlay ()
  "The overlay that draws the budget line above the table.
Found by its property: the buffer outlives its local variables when the
inspector is opened again."
  (or (seq-find (lambda (overlay) (overlay-get overlay 'contextls-budget))
                (overlays-in (point-min) (point-max)))
      (let ((overlay (make-overlay (point-min) (point-min))))
        (overlay-put overlay 'contextls-budget t)
        overlay)))

(defun contextls--update-inspector (root)
  "Refill the inspector when it is the one of ROOT."
  (let ((buffer (get-buffer "*contextls*")))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (when (equal contextls--list-root root)
          (contextls--fill-inspector))))))

(add-hook 'contextls-window-change-functions #'contextls--update-inspector)

(defun contextls--list-item ()
  "The item at point in the inspector."
  (let ((id (tabulated-list-get-id)))
    (or (seq-find (lambda (item) (equal (plist-get item :id) id))
                  (contextls--items contextls--list-root))
        (user-error "No item here"))))

(defun contextls-list-visit ()
  "Visit the file and lines of the item at point."
  (interactive nil contextls-list-mode)
  (let* ((item (contextls--list-item))
         (meta (plist-get item :metadata))
         (path (plist-get meta :path)))
    (unless path (user-error "%s is not from a file" (plist-get item :id)))
    (find-file (expand-file-name path contextls--list-root))
    (goto-char (point-min))
    (when-let ((line (plist-get meta :startLine))) (forward-line (1- line)))))

(defun contextls-list-toggle-pin ()
  "Pin the item at point, or unpin it."
  (interactive nil contextls-list-mode)
  (let* ((item (contextls--list-item))
         (root contextls--list-root)
         (pinned (eq (plist-get item :pinned) t)))
    (contextls--request :contextls/pin
                        (contextls--workspace-params root :id (plist-get item :id)
                                                     :pin (if pinned :json-false t))
                        root)
    (message "contextls: %s %s" (if pinned "unpinned" "pinned") (plist-get item :id))))

(defun contextls-list-mark-delete ()
  "Mark the item at point for removal by \\[contextls-list-execute]."
  (interactive nil contextls-list-mode)
  (tabulated-list-put-tag "D" t))

(defun contextls-list-unmark ()
  "Unmark the item at point."
  (interactive nil contextls-list-mode)
  (tabulated-list-put-tag " " t))

(defun contextls--marked-ids ()
  "The ids marked for removal in the inspector, top to bottom."
  (let (ids)
    (save-excursion
      (goto-char (point-min))
      (while (not (eobp))
        (when (and (eq (char-after) ?D) (tabulated-list-get-id))
          (push (tabulated-list-get-id) ids))
        (forward-line 1)))
    (nreverse ids)))

(defun contextls-list-execute ()
  "Remove the items marked for removal."
  (interactive nil contextls-list-mode)
  (let ((ids (contextls--marked-ids)))
    (if (null ids)
        (message "Nothing is marked")
      (let ((result (contextls--request :contextls/remove
                                        (contextls--workspace-params contextls--list-root
                                                                     :ids (vconcat ids))
                                        contextls--list-root)))
        (message "contextls: removed %s to the archive"
                 (string-join (contextls--list (plist-get result :removed)) ", "))))))

(defun contextls-list-reread ()
  "Read the item at point again from its file (it is stale)."
  (interactive nil contextls-list-mode)
  (contextls-reread (list (plist-get (contextls--list-item) :id)) contextls--list-root))

(defun contextls-list-forget ()
  "Forget the item at point for good, after asking."
  (interactive nil contextls-list-mode)
  (contextls-forget (plist-get (contextls--list-item) :id) nil contextls--list-root))

(defun contextls-list-expand ()
  "Show the item at point whole again (it is an outline)."
  (interactive nil contextls-list-mode)
  (contextls-set-view (plist-get (contextls--list-item) :id) "whole" contextls--list-root))

(defun contextls-list-outline ()
  "Show the item at point as its outline (signatures, no bodies)."
  (interactive nil contextls-list-mode)
  (contextls-set-view (plist-get (contextls--list-item) :id) "outline" contextls--list-root))

(defun contextls-list-refresh ()
  "Read the window again."
  (interactive nil contextls-list-mode)
  (contextls--read-window contextls--list-root)
  (contextls--fill-inspector))

(provide 'contextls-list)
;;; contextls-list.el ends here
