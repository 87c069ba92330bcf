;;; contextls-connection-test.el --- One connection, what it holds, how it is installed  -*- lexical-binding: t -*-

;;; Commentary:

;; Run by scripts/test-emacs.sh in `emacs --batch', against the real server.
;; One server process serves every project of an Emacs, as workspace
;; folders; a folder the server refuses starts nothing; the connection is
;; an object that holds its state, and a shutdown leaves none behind.  Also:
;; what a person sees when the server cannot read a request, the version,
;; an install by package.el's autoloads alone.

;;; Code:

(require 'contextls-test-helpers)
(require 'package)

(defun contextls-test--server-processes ()
  "The live processes running a contextls server command."
  (seq-filter (lambda (process)
                (and (process-live-p process)
                     (equal (process-name process) "contextls")))
              (process-list)))

(defun contextls-test--git-init (directory)
  "Make DIRECTORY a git repository (a project)."
  (let ((default-directory (file-name-as-directory directory)))
    (should (zerop (call-process "git" nil nil nil "init" "-q")))))

(ert-deftest contextls-test-one-server-for-every-project-and-none-for-a-refused-folder ()
  (contextls-test--with-workspace '(("a/one.py" . "a = 1\n") ("b/two.py" . "b = 2\n")
                                    ("home/notes.txt" . "notes\n"))
    (let* ((home (expand-file-name "home" root))
           (process-environment (cons (concat "HOME=" home) process-environment)))
      (contextls-test--git-init (expand-file-name "a" root))
      (contextls-test--git-init (expand-file-name "b" root))
      (unwind-protect
          (progn
            (let ((default-directory (file-name-as-directory (expand-file-name "a" root))))
              (contextls-add-text "a note in a"))
            (let ((default-directory (file-name-as-directory (expand-file-name "b" root))))
              (contextls-add-text "a note in b"))
            ;; Home is too wide to be a project: the server refuses it, and says why.
            (let ((default-directory (file-name-as-directory home)))
              (let ((err (should-error (contextls-add-text "a note at home") :type 'user-error)))
                (should (string-match-p "too wide to be a workspace folder" (cadr err))))
              (should (equal (contextls--mode-line-string) ""))
              ;; Asked again, it answers at once, from what it knows.
              (should-error (contextls-add-text "again") :type 'user-error))
            (should (= (length contextls--connections) 1))
            (should (= (length (contextls-test--server-processes)) 1))
            (let ((conn (car contextls--connections)))
              (should (object-of-class-p conn 'jsonrpc-process-connection))
              (should (equal (sort (hash-table-keys (contextls--windows conn)) #'string<)
                             (list (expand-file-name "a" root) (expand-file-name "b" root)
                                   home))))
            (let ((default-directory (file-name-as-directory (expand-file-name "b" root))))
              (should (equal (mapcar (lambda (item) (plist-get item :content))
                                     (contextls-test--items))
                             '("a note in b")))))
        (contextls-test--cleanup (list (expand-file-name "a" root) (expand-file-name "b" root)
                                       home))))))

(ert-deftest contextls-test-a-shutdown-leaves-no-state-behind ()
  (contextls-test--with-workspace '(("s.py" . "one = 1\ntwo = 2\n"))
    (let ((root (directory-file-name root)))
      (with-current-buffer (find-file-noselect (expand-file-name "s.py"))
        (contextls-test--select-line 1)
        (contextls-add-region (region-beginning) (region-end))
        (should (contextls--overlays-of root "ctx-1"))
        (should (string-match-p "·1/50" (contextls--mode-line-string root)))
        (contextls-shutdown root)
        (should-not contextls--connections)
        (should-not (contextls--window-of root))
        (should-not (contextls--status root))
        (should-not (contextls--items root))
        (should (equal (contextls--mode-line-string root) ""))
        (should-not (contextls--overlays-of root "ctx-1"))
        (should-not (contextls-test--server-processes))
        ;; The next command starts afresh, with the window as the server keeps it.
        (should (equal (mapcar (lambda (item) (plist-get item :id)) (contextls-test--items))
                       '("ctx-1")))))))

(ert-deftest contextls-test-the-server-starts-without-waiting ()
  (contextls-test--with-workspace '(("w.py" . "w = 1\n"))
    (contextls-test--git-init root)
    (let ((root (directory-file-name root)))
      ;; Visiting a file of a project with the mode on starts the server and
      ;; returns before it answers; its status arrives on its own.
      (contextls-mode 1)
      (unwind-protect
          (let* ((buffer (find-file-noselect (expand-file-name "w.py")))
                 (conn (contextls--window-connection (contextls--window-of root))))
            (should (eq (contextls--state conn) 'starting))
            (should-not (contextls--status root))
            (contextls-test--wait (lambda () (consp (contextls--status root))))
            (should (eq (contextls--state conn) 'ready))
            (kill-buffer buffer))
        (contextls-mode -1)))))

(ert-deftest contextls-test-a-secret-is-said-from-the-warning-s-data ()
  ;; The server sends warnings as data to this client (it says so in
  ;; `initialize'); the words are this package's, naming its own command.
  ;; The key is made of two halves: this file must not look like a secret itself.
  (contextls-test--with-workspace `(("settings.txt"
                                     . ,(concat "AWS_ACCESS_KEY_ID=AKIA" "Z7QK3N5WXYV2JD4P\n")))
    (let ((said nil))
      (cl-letf (((symbol-function 'message)
                 (lambda (format &rest args)
                   (when format (push (apply #'format format args) said)))))
        (with-current-buffer (find-file-noselect (expand-file-name "settings.txt"))
          (contextls-add-buffer))
        (contextls-test--wait
         (lambda () (seq-find (lambda (line) (string-match-p "seems to contain" line)) said))))
      (let ((warned (seq-find (lambda (line) (string-match-p "seems to contain" line)) said)))
        (should (string-match-p "\\`contextls: settings.txt seems to contain an AWS access key"
                                warned))
        (should (string-match-p "M-x contextls-forget, item ctx-1" warned))
        (should-not (string-match-p "contextls forget" warned))))))

(ert-deftest contextls-test-the-mode-line-says-what-a-prompt-cache-keeps ()
  ;; After a render, the status estimates what a prompt cache keeps of the
  ;; next one: the items before the first that changed.
  (contextls-test--with-workspace '(("a.py" . "a = 1\n"))
    (let ((root (directory-file-name root)))
      (contextls-add-text "the first note")
      (contextls-add-text "the second note")
      (should (string-empty-p (contextls--cache-words (plist-get (contextls--status root) :cache))))
      (contextls--render root)
      (contextls-add-text "the third note")
      (contextls-test--wait (lambda () (plist-get (contextls--status root) :cache)))
      (let* ((status (contextls--status root))
             (third (plist-get (car (last (contextls-test--items))) :tokens)))
        (should (= (plist-get (plist-get status :cache) :nextUncached) third))
        (should (string-match-p
                 (format "Prompt cache: prefix kept 100%% of the last render; the next sends ~%d tokens past it"
                         third)
                 (get-text-property 1 'help-echo (contextls--mode-line-string root))))))))

(ert-deftest contextls-test-a-crash-is-followed-by-a-start-in-the-background ()
  (contextls-test--with-workspace '(("c.py" . "c = 1\n"))
    (let ((root (directory-file-name root)))
      (with-current-buffer (find-file-noselect (expand-file-name "c.py"))
        (contextls-add-buffer)
        (let* ((first (contextls-test--conn root))
               (said (contextls-test--messages
                      (lambda ()
                        (signal-process (jsonrpc--process first) 'kill)
                        (contextls-test--wait (lambda () (eq (contextls--status root) 'crashed)))
                        (should (equal (contextls--mode-line-string root) " ctx ✗ "))
                        ;; Nobody runs a command: a new server comes, and the window with it.
                        (contextls-test--wait
                         (lambda () (not (eq (contextls-test--conn root) first))) 5)
                        (contextls-test--wait (lambda () (consp (contextls--status root))) 10)))))
          ;; What happened, in this package's words; none of jsonrpc's.
          (should (member "contextls: the server stopped (killed by signal 9); connecting again in the background"
                          said))
          (should (member "contextls: the server is back, serving 1 project"
                          said))
          (should-not (seq-find (lambda (line) (string-match-p "jsonrpc" line)) said))
          (should (string-match-p "·1/50" (contextls--mode-line-string root)))
          ;; The buffer is open on it: an unsaved edit is what renders.
          (goto-char (point-max))
          (insert "d = 2\n")
          (should (string-match-p "d = 2" (plist-get (contextls--render) :text))))))))

(ert-deftest contextls-test-a-server-that-keeps-dying-is-left-alone ()
  (contextls-test--with-workspace '(("k.py" . "k = 1\n"))
    (let ((contextls-server-command (list contextls-test--server "serve" "--no-such-option"))
          (root (directory-file-name root))
          (starts 0))
      (with-current-buffer (find-file-noselect (expand-file-name "k.py"))
        (let ((count (lambda (&rest _) (setq starts (1+ starts)))))
          (advice-add 'contextls--start :before count)
          (unwind-protect
              (cl-letf (((symbol-function 'contextls--reconnect-delay) (lambda (_) 0.05)))
                (should-error (contextls-add-text "x") :type 'user-error)
                (contextls-test--wait
                 (lambda () (>= (contextls--failures (contextls-test--conn root))
                                contextls--reconnect-tries))
                 20)
                (accept-process-output nil 0.5))
            (advice-remove 'contextls--start count)))
        (should (= starts contextls--reconnect-tries))
        (should (equal (contextls--mode-line-string root) " ctx ✗ "))))))

(ert-deftest contextls-test-what-the-server-cannot-read-is-said-in-words ()
  (contextls-test--with-workspace nil
    (contextls-add-text "a note")
    (dolist (case '((:contextls/search (:query "") "\\`query: must not be empty\\'")
                    (:contextls/configure (:settings (:maxTokens 0))
                                          "\\`maxTokens: must be at least 1\\'")
                    (:contextls/search (:query 7) "\\`query: must be text\\'")))
      (let ((err (should-error (contextls--send (car case)
                                                (append (contextls--workspace-params
                                                         (directory-file-name root))
                                                        (cadr case)))
                               :type 'jsonrpc-error)))
        (should (string-match-p (nth 2 case) (contextls--error-message err)))))
    (with-temp-buffer
      (setq buffer-file-name (expand-file-name "blank.py" root))
      (insert "   \n\n")
      (let ((err (should-error (contextls-add-region (point-min) (point-max))
                               :type 'user-error)))
        (should (string-match-p "only white space" (cadr err))))
      (set-buffer-modified-p nil))
    (should-error (contextls-search "  ") :type 'user-error)))

(ert-deftest contextls-test-one-version-for-the-server-and-both-editors ()
  (let* ((repository (expand-file-name "../../.." contextls-test--dir))
         (read (lambda (file regexp)
                 (with-temp-buffer
                   (insert-file-contents (expand-file-name file repository))
                   (and (re-search-forward regexp nil t) (match-string 1)))))
         (header (funcall read "editors/emacs/contextls.el" "^;; Version: \\(.+\\)$"))
         (server (funcall read "server/contextls/__init__.py" "^__version__ = \"\\(.+\\)\"$"))
         (vscode (funcall read "editors/vscode/package.json" "^  \"version\": \"\\(.+\\)\",$")))
    (should (equal header contextls-version))
    (should (equal server contextls-version))
    (should (equal vscode contextls-version))))

(ert-deftest contextls-test-an-install-by-autoloads-alone-draws-highlights ()
  ;; package.el loads a package's autoloads, nothing else, until a command
  ;; needs more: turning the mode on must bring the highlights too.
  (contextls-test--with-workspace '(("h.py" . "first = 1\nsecond = 2\n"))
    (contextls-test--git-init root)
    (contextls-test--cli "add" "h.py:2")
    (let* ((package (make-temp-file "contextls-pkg" t))
           (lisp (file-name-directory (locate-library "contextls"))))
      (unwind-protect
          (progn
            (dolist (file (directory-files lisp t "\\`contextls.*\\.el\\'"))
              (copy-file file (file-name-as-directory package)))
            (package-generate-autoloads "contextls" package)
            (let ((output
                   (with-temp-buffer
                     (call-process
                      (expand-file-name invocation-name invocation-directory) nil t nil
                      "--batch" "-Q" "--eval"
                      (format "%S"
                              `(progn
                                 (add-to-list 'load-path ,package)
                                 (load ,(expand-file-name "contextls-autoloads.el" package))
                                 (setq contextls-server-command '(,contextls-test--server "serve"))
                                 (contextls-mode 1)
                                 (find-file ,(expand-file-name "h.py" root))
                                 (let ((deadline (+ (float-time) 10)))
                                   (while (and (< (float-time) deadline)
                                               (not (seq-find (lambda (o) (overlay-get o 'contextls-id))
                                                              (overlays-in (point-min) (point-max)))))
                                     (accept-process-output nil 0.05)))
                                 (princ (format "highlighted lines: %S\n"
                                                (mapcar (lambda (o) (line-number-at-pos (overlay-start o)))
                                                        (seq-filter (lambda (o) (overlay-get o 'contextls-id))
                                                                    (overlays-in (point-min) (point-max))))))
                                 (contextls-shutdown))))
                     (buffer-string))))
              (should (string-match-p "^highlighted lines: (2)$" output))))
        (delete-directory package t)))))

(provide 'contextls-connection-test)
;;; contextls-connection-test.el ends here
