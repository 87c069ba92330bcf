;;; contextls-gptel.el --- The contextls window in every gptel request  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; `contextls-gptel-mode' attaches the rendered window of the project to
;; every request gptel sends, as gptel's own context (`gptel-add') is sent.
;; It goes through gptel's documented hook `gptel-prompt-transform-functions'
;; (gptel 0.9.8.5 and newer): gptel calls its functions in a temporary buffer
;; holding the prompt, with point at its end, and sends that buffer's text.
;; A function that takes two arguments (a callback and the request's state)
;; may finish later; this one asks the server without blocking Emacs, puts
;; the context at the start of the last user prompt, then calls the
;; callback.  It goes after the prompt's prefix (`### ' in Markdown), which
;; gptel strips from the start of each prompt it sends.  The edits of every
;; buffer open on the server are sent before the render is asked for, and the
;; server takes them before it renders: the context holds what was typed.
;;
;; `contextls-gptel-mode' is global; `contextls-gptel-local-mode' does the
;; same in one chat buffer only.  gptel itself is optional: this file loads
;; and compiles without it.

;;; Code:

(require 'contextls)

(defvar gptel-prompt-transform-functions)
(defvar gptel-prompt-prefix-alist)
(defvar gptel--system-message)

(defcustom contextls-gptel-max-tokens nil
  "The most tokens of context attached to a gptel request, or nil.
Nil means the window's own budget.  When the window holds more, the newest
items that fit are attached (the server chooses, pinned items first)."
  :type '(choice (const :tag "The window's budget" nil) natnum)
  :group 'contextls)

(defcustom contextls-gptel-place 'prompt
  "Where the context goes in a gptel request.
`prompt': at the start of the last user prompt.  The conversation
before it stays the same from one request to the next, so a prompt
cache keeps it; the context itself is sent anew each time.
`system': after the system message.  The render changes at its end,
so a prompt cache keeps the system message and the context up to what
changed (with Anthropic, set `gptel-cache' to include `system'); but a
change of the window makes the conversation after it new to the cache.
A system message gptel does not hold as text (a function, a template)
gets nothing: the context then goes into the prompt."
  :type '(choice (const :tag "The last user prompt" prompt)
                 (const :tag "After the system message" system))
  :group 'contextls)

(defvar-local contextls-gptel--attached nil
  "Non-nil in a prompt buffer the window was already attached to.")

(defun contextls-gptel--prompt-prefix ()
  "Return the prefix gptel puts before a user prompt in this mode, or \"\"."
  (or (and (boundp 'gptel-prompt-prefix-alist)
           (alist-get major-mode gptel-prompt-prefix-alist))
      ""))

(defun contextls-gptel--insertion-point ()
  "The place of the context in the prompt buffer: the start of the last prompt.
That is after the last response gptel marked with its `gptel' text
property (or the start of the buffer), past white space and the prompt
prefix, so gptel still finds the prefix where it strips it."
  (let ((pos (point-max))
        (prefix (contextls-gptel--prompt-prefix)))
    (while (and (> pos (point-min)) (not (get-text-property (1- pos) 'gptel)))
      (setq pos (or (previous-single-property-change pos 'gptel nil (point-min))
                    (point-min))))
    (save-excursion
      (goto-char pos)
      (skip-chars-forward " \t\r\n")
      (when (and (not (string-empty-p prefix)) (looking-at (regexp-quote prefix)))
        (goto-char (match-end 0)))
      (point))))

(defun contextls-gptel--attach (result)
  "Insert the render RESULT into the prompt buffer, and say what was attached."
  (let ((text (plist-get result :text))
        (count (length (plist-get result :itemIds)))
        (left-out (length (plist-get result :omittedIds))))
    (if (zerop count)
        (message "contextls: the window is empty; nothing attached")
      (if (and (eq contextls-gptel-place 'system)
               (boundp 'gptel--system-message)
               (or (null gptel--system-message) (stringp gptel--system-message)))
          (setq-local gptel--system-message
                      (if (member gptel--system-message '(nil ""))
                          text
                        (concat gptel--system-message "\n\n" text)))
        (save-excursion
          (goto-char (contextls-gptel--insertion-point))
          (insert text "\n\n")))
      (message "contextls: %s, %s attached%s" (contextls--plural count "item")
               (contextls--plural (contextls--kilo (plist-get result :tokens)) "token")
               (if (> left-out 0)
                   (format " (%s left out by the budget)" left-out)
                 "")))))

(defun contextls-gptel-transform (callback _state)
  "Attach the project's context window to a gptel prompt, then call CALLBACK.
A function of `gptel-prompt-transform-functions': gptel calls it in the
temporary buffer of the request (whose STATE it does not need), and sends
that buffer's text once CALLBACK is called.  The window is rendered
asynchronously; if the server cannot answer, the request goes without it."
  (let* ((buffer (current-buffer))
         (root (contextls--root))
         (finish (lambda (&optional result)
                   (when (and result (buffer-live-p buffer))
                     (with-current-buffer buffer (contextls-gptel--attach result)))
                   (funcall callback))))
    (if contextls-gptel--attached
        (funcall callback)
      (setq contextls-gptel--attached t)
      (condition-case err
          (let ((conn (contextls--connection root)))
            (run-hook-with-args 'contextls-before-request-functions root)
            (jsonrpc-async-request
             conn :contextls/render
             (apply #'contextls--workspace-params root :format "markdown"
                    (and contextls-gptel-max-tokens (list :maxTokens contextls-gptel-max-tokens)))
             :success-fn finish
             :error-fn (lambda (error)
                         (message "contextls: no context attached: %s"
                                  (plist-get error :message))
                         (funcall finish))
             :timeout-fn (lambda ()
                           (message "contextls: no context attached: the server did not answer")
                           (funcall finish))
             :timeout 10))
        (error (message "contextls: no context attached: %s" (error-message-string err))
               (funcall finish))))))

(defun contextls-gptel--check ()
  "Load gptel, or say which gptel this needs."
  (unless (and (require 'gptel nil t) (boundp 'gptel-prompt-transform-functions))
    (user-error "Contextls: this needs gptel 0.9.8.5 or newer (with \
`gptel-prompt-transform-functions')")))

;;;###autoload
(define-minor-mode contextls-gptel-mode
  "Attach the contextls window of the project to every gptel request.
The rendered window goes before the last user prompt, within
`contextls-gptel-max-tokens'; the echo area says what was attached."
  :global t
  :group 'contextls
  (if contextls-gptel-mode
      (progn (contextls-gptel--check)
             ;; Only once gptel is loaded: set before, the variable would keep
             ;; gptel's own transforms (its context, presets) out.
             (add-hook 'gptel-prompt-transform-functions #'contextls-gptel-transform))
    (when (boundp 'gptel-prompt-transform-functions)
      (remove-hook 'gptel-prompt-transform-functions #'contextls-gptel-transform))))

;;;###autoload
(define-minor-mode contextls-gptel-local-mode
  "Attach the contextls window to every gptel request from this buffer."
  :group 'contextls
  (if contextls-gptel-local-mode
      (progn (contextls-gptel--check)
             (add-hook 'gptel-prompt-transform-functions #'contextls-gptel-transform nil t))
    (remove-hook 'gptel-prompt-transform-functions #'contextls-gptel-transform t)))

(provide 'contextls-gptel)
;;; contextls-gptel.el ends here
