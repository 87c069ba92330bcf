;;; contextls-mode-line.el --- The context budget in the mode line  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The budget of the current project in the mode line,
;; ` ctx 3.2k/8k gpt-4o·12/50 ': tokens of the budget in the tokens of the
;; model the window counts for (`~' before them when its counts are an
;; estimate), items of the maximum.  `contextls-mode' (in
;; contextls.el) puts the entry here in `mode-line-misc-info', as a
;; conditional headed by the mode's variable, as Emacs packages do it.
;;
;; The mode line is drawn at every redisplay, in every window: the text is
;; made once per status and kept with the window, the root of each buffer is
;; cached, and the mouse map is built once.

;;; Code:

(require 'contextls-client)

(defcustom contextls-connect-on-visit t
  "Whether `contextls-mode' connects when a file of a project is visited.
Then the mode line shows the project's window without a command first."
  :type 'boolean
  :group 'contextls)

(defvar contextls--mode-line-map (make-mode-line-mouse-map 'mouse-1 'contextls-list)
  "The mouse map of the mode line text: a click opens the inspector.")

(defun contextls--budget (status)
  "The token budget of STATUS: its effective budget, else its maxTokens."
  (let ((budget (plist-get status :budget)))
    (if (and (numberp budget) (> budget 0)) budget (plist-get status :maxTokens))))

(defun contextls--budget-reason (status)
  "Why the budget of STATUS is what it is, when the window adapts it; else nil."
  (when (equal (plist-get status :budgetPolicy) "adaptive")
    (format "adaptive: %s, complexity %.2f -> %.1fk of base %s"
            (plist-get status :task) (or (plist-get status :complexity) 0)
            (/ (contextls--budget status) 1000.0)
            (contextls--kilo (plist-get status :maxTokens)))))

(defun contextls--mode-line-help (status)
  "The help text of the mode line for STATUS."
  (let ((next (plist-get status :nextEviction))
        (last (contextls--list (plist-get status :lastEvicted)))
        (reason (contextls--budget-reason status))
        (views (contextls--view-counts status)))
    (concat (format "contextls: %s of %s tokens of %s, %s of %s items%s"
                    (contextls--number (plist-get status :tokens))
                    (contextls--number (contextls--budget status))
                    (contextls--model-words status)
                    (contextls--number (plist-get status :itemCount))
                    (contextls--number (plist-get status :maxItems))
                    (if views (format " (%s)" views) ""))
            (if reason (concat "\n" reason) "")
            (if next (format "\nNext to be evicted: %s" (contextls--describe next)) "")
            (if last (format "\nLast evicted: %s" (mapconcat #'contextls--describe last ", "))
              "")
            (contextls--cache-words (plist-get status :cache))
            "\nmouse-1: inspect the window")))

(defun contextls--cache-words (cache)
  "Return the words for the CACHE estimate of a status, or \"\" if it has none."
  (if (and cache (numberp (plist-get cache :kept)))
      (format "\nPrompt cache: prefix kept %d%% of the last render; the next sends ~%s tokens past it"
              (round (* 100 (plist-get cache :kept)))
              (contextls--number (or (plist-get cache :nextUncached) 0)))
    ""))

(defun contextls--make-mode-line (status hot)
  "The mode line text of STATUS, in the error face when HOT."
  (let ((stale (or (plist-get status :staleCount) 0)))
    (propertize (format " ctx %s%s/%s %s·%d/%d%s "
                        (if (eq (plist-get status :countExact) :json-false) "~" "")
                        (contextls--kilo (plist-get status :tokens))
                        (contextls--kilo (contextls--budget status))
                        (contextls--model status)
                        (plist-get status :itemCount) (plist-get status :maxItems)
                        (if (> stale 0) (format "·%d stale" stale) ""))
                'face (cond (hot 'error) ((>= (plist-get status :percent) 90) 'warning))
                'help-echo (contextls--mode-line-help status)
                'mouse-face 'mode-line-highlight
                'local-map contextls--mode-line-map)))

(defconst contextls--crashed-mode-line
  (propertize " ctx ✗ " 'face 'error
              'help-echo "contextls: the server stopped; it is started again in the \
background, or by the next command")
  "The mode line text when the server stopped.")

(defun contextls--mode-line-string (&optional root)
  "The mode line text for ROOT (the current buffer's).
For example ` ctx 3.2k/8k gpt-4o·12/50 '."
  (let* ((window (contextls--window-of (or root (car (contextls--root-info)))))
         (status (and window (contextls--window-status window))))
    (cond
     ((eq status 'crashed) contextls--crashed-mode-line)
     ((null status) "")
     (t
      (let* ((evicted-at (contextls--window-evicted-at window))
             (hot (and evicted-at (< (- (float-time) evicted-at) 10)))
             (cached (contextls--window-mode-line window)))
        (if (and (eq (car cached) status) (eq (cadr cached) hot))
            (cddr cached)
          (let ((text (contextls--make-mode-line status hot)))
            (setf (contextls--window-mode-line window) (cons status (cons hot text)))
            text)))))))

(defconst contextls--mode-line-entry '(contextls-mode (:eval (contextls--mode-line-string)))
  "The entry of `contextls-mode' in `mode-line-misc-info'.")

(defun contextls--connect-visited-file ()
  "Connect to the project of the file just visited, without waiting."
  (when (and contextls-connect-on-visit buffer-file-name)
    (pcase-let ((`(,root ,in-project) (contextls--root-info)))
      (when in-project (contextls--connect-in-background root)))))

(provide 'contextls-mode-line)
;;; contextls-mode-line.el ends here
