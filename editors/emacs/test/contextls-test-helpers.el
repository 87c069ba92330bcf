;;; contextls-test-helpers.el --- What the contextls tests share  -*- lexical-binding: t -*-

;;; Commentary:

;; Every test talks to the real server from the project's venv
;; ($CONTEXTLS_TEST_SERVER), in a temporary workspace with a database of its
;; own.  What the server holds is read back over the client's own connection
;; with `contextls/list', so every range and text is checked where it ends up.

;;; Code:

(require 'ert)
(require 'contextls)

(defconst contextls-test--dir (file-name-directory (or load-file-name buffer-file-name)))

(defvar contextls-test--server (or (getenv "CONTEXTLS_TEST_SERVER") "contextls"))

(defun contextls-test--wait (predicate &optional seconds)
  "Wait until PREDICATE holds (at most SECONDS), serving process output meanwhile."
  (let ((deadline (+ (float-time) (or seconds 10))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (should (funcall predicate))))

(defun contextls-test--write-files (root files)
  "Write FILES ((NAME . CONTENT) ...) under ROOT, as UTF-8 bytes."
  (dolist (file files)
    (let ((coding-system-for-write 'no-conversion)
          (name (expand-file-name (car file) root)))
      (make-directory (file-name-directory name) t)
      (with-temp-file name
        (set-buffer-multibyte nil)
        (insert (encode-coding-string (cdr file) 'utf-8))))))

(defun contextls-test--cleanup (roots)
  "Stop serving ROOTS and kill their buffers.
Their server stops once it serves nothing else; none is left behind."
  (dolist (root roots)
    (ignore-errors (contextls-shutdown (directory-file-name root)))
    (dolist (buffer (buffer-list))
      (when (and (buffer-file-name buffer)
                 (string-prefix-p root (buffer-file-name buffer)))
        (with-current-buffer buffer (set-buffer-modified-p nil))
        (kill-buffer buffer))))
  (dolist (conn contextls--connections)
    (when (zerop (hash-table-count (contextls--windows conn)))
      (ignore-errors (contextls--stop conn))))
  (clrhash contextls--overlays))

(defun contextls-test--conn (root)
  "The connection serving ROOT."
  (contextls--window-connection (contextls--window-of (directory-file-name root))))

(defun contextls-test--copy-stdlib-json (root)
  "Copy the json package of Python's standard library under ROOT.
It is code nobody here wrote.
Return the directory of the copy."
  (let* ((python (expand-file-name "python" (file-name-directory contextls-test--server)))
         (source (string-trim (with-output-to-string
                                (call-process python nil standard-output nil "-c"
                                              "import json, os; print(os.path.dirname(json.__file__))"))))
         (copy (expand-file-name "json" root)))
    (copy-directory source copy nil t t)
    (let ((cache (expand-file-name "__pycache__" copy)))
      (when (file-directory-p cache) (delete-directory cache t)))
    copy))

(defun contextls-test--cli (&rest args)
  "Run the command line with ARGS in the test's environment; return its output.
It runs in its own process, on the test's database, as a second client would
\(no daemon to start and stop).  The command must succeed."
  (with-temp-buffer
    (let* ((process-environment (cons "CONTEXTLS_NO_DAEMON=1" process-environment))
           (status (apply #'call-process contextls-test--server nil t nil args)))
      (unless (eql status 0)
        (error "Command `contextls %s' failed (%s): %s" (string-join args " ") status
               (buffer-string)))
      (buffer-string))))

(defmacro contextls-test--with-workspace (files &rest body)
  "Run BODY in a fresh workspace holding FILES ((NAME . CONTENT) ...), then clean up.
In BODY, `root' is the workspace's directory, `state' the database's."
  (declare (indent 1))
  `(let* ((root (make-temp-file "contextls-ws" t))
          (state (make-temp-file "contextls-state" t))
          (process-environment (append (list (concat "CONTEXTLS_STORAGE=" state "/db.sqlite3")
                                             (concat "CONTEXTLS_RUNTIME_DIR=" state)
                                             (concat "CONTEXTLS_STATE_DIR=" state))
                                       process-environment))
          (contextls-server-command (list contextls-test--server "serve"))
          (contextls-settings nil)
          (default-directory (file-name-as-directory root))
          (transient-mark-mode t)
          (inhibit-message t))
     (unwind-protect
         (progn
           (contextls-test--write-files root ,files)
           ,@body)
       (contextls-test--cleanup (list root))
       (delete-directory root t)
       (delete-directory state t))))

(defun contextls-test--items (&optional directory)
  "The server's window of DIRECTORY (the current one), oldest first."
  (let ((root (directory-file-name (expand-file-name (or directory default-directory)))))
    (append (plist-get (contextls--request :contextls/list
                                           (list :workspace (contextls--uri root))
                                           root)
                       :items)
            nil)))

(defun contextls-test--meta (item key)
  "KEY of ITEM's metadata."
  (plist-get (plist-get item :metadata) key))

(defun contextls-test--select-line (line &optional from-text)
  "Select line LINE (1-based); from the end of FROM-TEXT on it, if given."
  (goto-char (point-min))
  (forward-line (1- line))
  (when from-text (search-forward from-text (line-end-position)))
  (push-mark (point) t t)
  (end-of-line))

(defun contextls-test--messages (thunk)
  "Call THUNK; return the messages it showed, oldest first."
  (let (said)
    (cl-letf (((symbol-function 'message)
               (lambda (format &rest args)
                 (when format (push (apply #'format format args) said))
                 (car said))))
      (funcall thunk))
    (nreverse said)))

(provide 'contextls-test-helpers)
;;; contextls-test-helpers.el ends here
