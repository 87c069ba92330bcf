;;; contextls-bench.el --- What contextls costs Emacs: typing, a send, an add  -*- lexical-binding: t -*-

;;; Commentary:

;; Figures, not tests: `scripts/test-emacs.sh bench' runs this in
;; `emacs --batch' against the real server.  Each figure is a median over
;; many short blocks, with and without contextls alternating, so load on the
;; machine weighs on both sides alike.
;;
;; - A keystroke at the end of a 246K-character line of JSON (an emoji now
;;   and then): in a buffer open on the server, in the same buffer not open,
;;   and what the per-keystroke conversion this package used to do would cost
;;   on that line (two UTF-16 columns counted in Lisp, per hook pair).
;; - Sending a burst of typing on that line (once, when typing stops).
;; - `contextls-add-region' against the bare request on the wire.

;;; Code:

(require 'contextls-test-helpers)
(require 'contextls-sync-test)

(defun contextls-bench--median (values)
  "The median of VALUES."
  (nth (/ (length values) 2) (sort (copy-sequence values) #'<)))

(defun contextls-bench--per-call (n thunk)
  "Milliseconds per call of THUNK, over N calls."
  (let ((start (float-time)))
    (dotimes (_ n) (funcall thunk))
    (/ (* 1000 (- (float-time) start)) n)))

(defun contextls-bench--lisp-utf16-column (pos)
  "The UTF-16 column of POS counted character by character in Lisp.
What the change hooks did on every keystroke before they only noted spans."
  (let* ((text (save-excursion (goto-char pos)
                               (buffer-substring-no-properties (line-beginning-position) pos)))
         (n (length text)))
    (dotimes (i (length text))
      (when (> (aref text i) #xFFFF) (setq n (1+ n))))
    n))
(byte-compile 'contextls-bench--lisp-utf16-column) ; as it was: in a compiled package

(defun contextls-bench--keystroke ()
  "Type one character and delete it: a keystroke, without the line growing."
  (let ((last-command-event ?x))
    (self-insert-command 1))
  (delete-char -1))

(defun contextls-bench-typing ()
  "Typing on a 246K-character line, with the buffer open on the server and not."
  (contextls-test--with-workspace
      `(("data.json" . ,(concat "# first\n" (contextls-test--long-json-line 246000))))
    (setq contextls-settings '(:maxTokens 400000))
    (with-current-buffer (find-file-noselect (expand-file-name "data.json"))
      (contextls-test--select-line 1)
      (contextls-add-region (region-beginning) (region-end))
      (goto-char (point-max))
      (forward-line -1)
      (end-of-line)
      (let (on off)
        (dotimes (block 40)
          (dolist (synced (if (cl-evenp block) '(t nil) '(nil t)))
            (let ((before-change-functions
                   (if synced before-change-functions
                     (remq #'contextls--before-change before-change-functions)))
                  (after-change-functions
                   (if synced after-change-functions
                     (remq #'contextls--after-change after-change-functions))))
              (push (contextls-bench--per-call 200 #'contextls-bench--keystroke)
                    (if synced on off)))
            (contextls--send-changes (current-buffer))))
        (let ((on-ms (contextls-bench--median on))
              (off-ms (contextls-bench--median off))
              (old-ms (contextls-bench--median
                       (cl-loop repeat 15
                                collect (contextls-bench--per-call
                                         3 (lambda ()
                                             (dotimes (_ 4)
                                               (contextls-bench--lisp-utf16-column
                                                (point))))))))
              (send-ms (contextls-bench--median
                        (cl-loop repeat 41
                                 collect (progn
                                           (contextls-bench--keystroke)
                                           (contextls-bench--per-call
                                            1 (lambda () (contextls--send-changes
                                                          (current-buffer)))))))))
          (princ (format "typing at the end of a %s-character line (%s byte-compiled):\n"
                         (contextls--number (- (line-end-position) (line-beginning-position)))
                         (if (byte-code-function-p (symbol-function 'contextls--after-change))
                             "contextls" "contextls not")))
          (princ (format "  a keystroke: %.4f ms with the buffer open on the server, %.4f ms without: %+.4f ms\n"
                         on-ms off-ms (- on-ms off-ms)))
          (princ (format "  the old per-keystroke conversion would add %.1f ms on this line\n" old-ms))
          (princ (format "  sending a burst (once, when typing stops): %.2f ms\n" send-ms)))))))

(defun contextls-bench-add-region ()
  "An add of a region against the same request on the wire."
  (contextls-test--with-workspace
      `(("cost.py" . ,(mapconcat (lambda (n) (format "line_%04d = %d" n n))
                                 (number-sequence 1 2000) "\n")))
    (with-current-buffer (find-file-noselect (expand-file-name "cost.py"))
      (let* ((root (directory-file-name root))
             (select (lambda ()
                       (goto-char (point-min))
                       (forward-line (* 4 (random 490)))
                       (push-mark (point) t t)
                       (forward-line 2)))
             (wire (lambda ()
                     (funcall select)
                     (jsonrpc-request (contextls--connection root) :contextls/addRegion
                                      (contextls--workspace-params
                                       root :uri (contextls--uri buffer-file-name)
                                       :range (contextls--range (region-beginning) (region-end))
                                       :text (buffer-substring-no-properties
                                              (region-beginning) (region-end))))))
             (command (lambda ()
                        (funcall select)
                        (contextls-add-region (region-beginning) (region-end))))
             wire-ms command-ms)
        (dotimes (_ 5) (funcall command))
        (dotimes (block 20)
          (dolist (side (if (cl-evenp block) '(wire command) '(command wire)))
            (let ((ms (contextls-bench--per-call 3 (if (eq side 'wire) wire command))))
              (if (eq side 'wire) (push ms wire-ms) (push ms command-ms)))))
        (princ (format "an add of a region: %.2f ms by contextls-add-region, %.2f ms on the wire\n"
                       (contextls-bench--median command-ms) (contextls-bench--median wire-ms)))))))

(defun contextls-bench-run-batch ()
  "Run every benchmark and print its figures."
  (let ((inhibit-message t))
    (contextls-bench-typing)
    (contextls-bench-add-region)))

(provide 'contextls-bench)
;;; contextls-bench.el ends here
