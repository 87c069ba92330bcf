;;; gptel.el --- A stand-in for gptel's request pipeline, for tests  -*- lexical-binding: t -*-

;;; Commentary:

;; gptel is not packaged for Debian, so the tests run against this stand-in.
;; It follows the documented contract of `gptel-prompt-transform-functions'
;; (gptel 0.9.8.5 and newer; `gptel-request' in gptel-request.el):
;;
;; - the request's text is copied into a new temporary prompt buffer, made
;;   while the chat buffer is current (so it has that buffer's directory),
;;   whose `major-mode' is set to the chat's (`gptel--with-buffer-copy');
;; - the hook's value is the chat buffer's (local or global, `t' standing
;;   for the global functions), set buffer-locally in the prompt buffer;
;; - each function is called in the prompt buffer with point at its end:
;;   with no argument when it takes none, with the request state when it
;;   takes one, and with a callback and the state when it takes two (then
;;   it may finish later, by calling the callback);
;; - the chat's system message (`gptel--system-message') is copied into the
;;   prompt buffer too, where a transform may change it for this request;
;; - once every function has finished, the prompt buffer's text is what is
;;   sent, after the system message: responses (text with the `gptel' property) as the assistant's,
;;   the rest as the user's, each trimmed of white space and of the prompt
;;   prefix of the mode (`gptel-prompt-prefix-alist') at its start, as
;;   `gptel--trim-prefixes' does.
;;
;; Only what the contract says is here; it is not gptel.

;;; Code:

(require 'cl-lib)

(defvar gptel-mode nil
  "Non-nil in a chat buffer.")

(defvar gptel--system-message nil
  "The system message of a chat buffer; copied into the prompt buffer.")

(defun gptel--transform-add-context (callback _state)
  "Stand in for gptel's own transform: it adds nothing, then calls CALLBACK."
  (funcall callback))

(defcustom gptel-prompt-transform-functions '(gptel--transform-add-context)
  "Handlers to augment or transform a query before sending it."
  :type 'hook
  :group 'gptel)

(defcustom gptel-prompt-prefix-alist
  '((markdown-mode . "### ") (org-mode . "*** ") (text-mode . "### "))
  "String used as a prefix to the query being sent to the LLM."
  :type '(alist :key-type symbol :value-type string)
  :group 'gptel)

(defun gptel-standin--trim (text)
  "TEXT without white space around it and the prompt prefix at its start."
  (let ((prefix (or (alist-get major-mode gptel-prompt-prefix-alist) "")))
    (string-trim (string-trim-left
                  text (format "[\t\r\n ]*\\(?:%s\\)?[\t\r\n ]*" (regexp-quote prefix))))))

(defun gptel-standin--messages ()
  "The current buffer's text as chat messages: (ROLE . TEXT), in order."
  (let ((pos (point-min)) messages)
    (while (< pos (point-max))
      (let* ((response (get-text-property pos 'gptel))
             (next (or (next-single-property-change pos 'gptel) (point-max)))
             (text (gptel-standin--trim (buffer-substring-no-properties pos next))))
        (unless (string-empty-p text)
          (push (cons (if response "assistant" "user") text) messages))
        (setq pos next)))
    (nreverse messages)))

(defun gptel-standin-request (on-sent)
  "Send the current buffer as gptel would; call ON-SENT with the messages sent.
Returns the request's state (a plist, as gptel's state is opaque here)."
  (let* ((chat (current-buffer))
         (transforms gptel-prompt-transform-functions)
         (state (list :buffer chat))
         (prompt (generate-new-buffer " *gptel-prompt*" t)))
    (with-current-buffer prompt
      (insert-buffer-substring chat)
      (setq major-mode (buffer-local-value 'major-mode chat))
      (setq-local gptel--system-message (buffer-local-value 'gptel--system-message chat))
      (setq-local gptel-prompt-transform-functions transforms)
      (when (memq t gptel-prompt-transform-functions)
        (setq gptel-prompt-transform-functions
              (append (remq t gptel-prompt-transform-functions)
                      (default-value 'gptel-prompt-transform-functions))))
      (let* ((total (length gptel-prompt-transform-functions))
             (done 0)
             (send (lambda ()
                     (with-current-buffer prompt
                       (funcall on-sent
                                (append (and (stringp gptel--system-message)
                                             (list (cons "system" gptel--system-message)))
                                        (gptel-standin--messages))))
                     (kill-buffer prompt))))
        (if (zerop total)
            (funcall send)
          (run-hook-wrapped
           'gptel-prompt-transform-functions
           (lambda (function state)
             (with-current-buffer prompt
               (goto-char (point-max))
               (pcase (car (func-arity function))
                 (2 (funcall function (lambda ()
                                        (cl-incf done)
                                        (when (>= done total) (funcall send)))
                             state))
                 (arity (if (= arity 0) (funcall function) (funcall function state))
                        (cl-incf done)
                        (when (>= done total) (funcall send)))))
             nil)
           state))))
    state))

(provide 'gptel)
;;; gptel.el ends here
