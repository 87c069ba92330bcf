;;; contextls-client.el --- The connection to the contextls server and what it said  -*- lexical-binding: t -*-

;; Copyright (C) 2026 the contextls developers
;; SPDX-License-Identifier: MIT

;;; Commentary:

;; One connection per project root, started on the first command (or,
;; with `contextls-mode', when a file of a project is visited).  This file
;; keeps what the server last said about each root's window -- its status
;; and its items -- and tells the rest of the package when that changed,
;; through `contextls-window-change-functions'.  All per-item state is keyed
;; by root and id, as ids are numbered per workspace.
;;
;; Emacs 28's jsonrpc 1.0.14 leaves a notification that follows the answer to
;; a synchronous request unparsed until more output comes, so the state is
;; taken from each answer (every change answers with its `status' and what it
;; evicted), never from a push expected after it.

;;; Code:

(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'cl-lib)
(require 'seq)
(require 'url-util)

;;; Customization

(defgroup contextls nil
  "Keep the LLM context of a project with the contextls server."
  :group 'tools
  :prefix "contextls-")

(defcustom contextls-use-daemon t
  "Whether to use your shared contextls daemon, not a server of Emacs's own.
The daemon serves the command line and every editor that uses it: all of them
see the same windows and settings, and each sees the others' changes at once.
When nil, Emacs starts `contextls serve' per project (it still shares the
database, and notices other processes' changes within a second).
`contextls-server-command', when set, wins over this."
  :type 'boolean)

(defcustom contextls-server-command nil
  "Command that starts the contextls server, as a list of strings, or nil.
Nil means (\"contextls\" \"connect\") (the shared daemon) or
\(\"contextls\" \"serve\"), as `contextls-use-daemon' says.  Set it when
`contextls' is not on the variable `exec-path', e.g.
\(\"/path/to/.venv/bin/contextls\" \"connect\")."
  :type '(choice (const :tag "From `contextls-use-daemon'" nil) (repeat string)))

(defcustom contextls-settings nil
  "Settings sent to the server, as a plist of its camelCase keys.
For example (:maxTokens 16000 :maxItems 50 :encoding \"o200k_base\")."
  :type 'plist)

(defun contextls--server-command ()
  "Return the command to start (or reach) the server.
The daemon serves one database: with a :storage in `contextls-settings',
`contextls connect' asks for the daemon of that one."
  (let ((command (or contextls-server-command
                     (list "contextls" (if contextls-use-daemon "connect" "serve"))))
        (storage (plist-get contextls-settings :storage)))
    (if (and storage (equal (car (last command)) "connect"))
        (append command (list "--storage" (expand-file-name storage)))
      command)))

;;; Counting and naming, as messages say them

(defun contextls--plural (n singular &optional plural)
  "N followed by SINGULAR, or by PLURAL (SINGULAR with an s) unless N is 1."
  (format "%s %s" n (if (eql n 1) singular (or plural (concat singular "s")))))

(defun contextls--kilo (n)
  "N tokens, short: 950, 3.2k, 8k."
  (cond ((< n 1000) (number-to-string n))
        (t (let ((s (format "%.1f" (/ n 1000.0))))
             (concat (string-remove-suffix ".0" s) "k")))))

(defun contextls--describe (item)
  "ITEM as `ctx-3 (src/a.py:1-20, 312 tokens)'."
  (format "%s (%s, %s)" (plist-get item :id) (plist-get item :label)
          (contextls--plural (plist-get item :tokens) "token")))

(defun contextls--list (sequence)
  "SEQUENCE (a vector from JSON, or a list) as a list."
  (append sequence nil))

;;; Roots

(defvar-local contextls--root-cache nil
  "(DIRECTORY ROOT IN-PROJECT) of this buffer, as last computed.
The mode line asks for the root at every redisplay: `project-current' is
far too slow for that, so it runs once per `default-directory'.")

(defun contextls--root-info ()
  "The (ROOT IN-PROJECT) of the current buffer.
ROOT is the project root (`project-current', else `default-directory'),
without a trailing slash; IN-PROJECT says whether a project was found."
  (let ((directory (or default-directory "~/")))
    (unless (and contextls--root-cache (equal (car contextls--root-cache) directory))
      (let ((project (project-current nil directory)))
        (setq contextls--root-cache
              (list directory
                    (directory-file-name
                     (expand-file-name (if project (project-root project) directory)))
                    (and project t)))))
    (cdr contextls--root-cache)))

(defun contextls--root ()
  "The project root of the current buffer, without a trailing slash."
  (car (contextls--root-info)))

(defun contextls--uri (file)
  "The file:// URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defun contextls--workspace-params (root &rest params)
  "PARAMS with the workspace of ROOT."
  (append (list :workspace (contextls--uri root)) params))

;;; What the server said, per root

(defvar contextls--connections (make-hash-table :test #'equal)
  "Live connections by project root.")

(defvar contextls--ready (make-hash-table :test #'eq :weakness 'key)
  "Connections whose server has answered `initialize'.")

(defvar contextls--statuses (make-hash-table :test #'equal)
  "The last status of each project root, or the symbol `crashed'.")

(defvar contextls--items (make-hash-table :test #'equal)
  "The items of each root's window, oldest first, as last read or answered.")

(defvar contextls--evicted-at (make-hash-table :test #'equal)
  "When each root last evicted something (a float time), for the mode line.")

(defvar contextls--reported-evictions (make-hash-table :test #'equal)
  "Evictions already told in an answer's message: (ROOT . ID) -> float time.
The push that follows the answer then says nothing more.")

(defvar contextls--stopping nil
  "Roots whose server is being shut down on purpose.")

(defvar contextls-window-change-functions nil
  "Functions called with a root whose window (status or items) changed.")

(defvar contextls-connected-functions nil
  "Functions called with a root and its new connection, once it is initialized.")

(defvar contextls-disconnected-functions nil
  "Functions called with a root whose connection went away.")

(defvar contextls-before-request-functions nil
  "Functions called with a root before a request is sent to its server.
Pending document changes go first, so the server sees what the buffer has.")

(defun contextls--status (root)
  "The last status of ROOT: a plist, the symbol `crashed', or nil."
  (gethash root contextls--statuses))

(defun contextls--take-status (root status)
  "Keep STATUS as ROOT's, unless a newer one is already known."
  (let ((known (gethash root contextls--statuses)))
    (when (or (not (consp known))
              (>= (or (plist-get status :revision) 0) (or (plist-get known :revision) 0)))
      (puthash root status contextls--statuses))))

(defun contextls--window-changed (root)
  "Tell every view of ROOT's window that it changed."
  (run-hook-with-args 'contextls-window-change-functions root)
  (force-mode-line-update t))

(defun contextls--forget-items (root ids)
  "Drop the items IDS from ROOT's known window."
  (when ids
    (puthash root (seq-remove (lambda (item) (member (plist-get item :id) ids))
                              (gethash root contextls--items))
             contextls--items)))

(defun contextls--remember-items (root items &optional newest)
  "Put ITEMS in ROOT's known window, in place of their old selves.
NEWEST ones (added, restored) go to the newest end, as do unknown ones."
  (when items
    (let* ((ids (mapcar (lambda (item) (plist-get item :id)) items))
           (known (gethash root contextls--items))
           (kept (mapcar (lambda (item)
                           (or (and (not newest)
                                    (seq-find (lambda (new) (equal (plist-get new :id)
                                                                   (plist-get item :id)))
                                              items))
                               item))
                         (if newest
                             (seq-remove (lambda (item) (member (plist-get item :id) ids)) known)
                           known)))
           (kept-ids (mapcar (lambda (item) (plist-get item :id)) kept)))
      (puthash root (append kept (seq-remove (lambda (item)
                                               (member (plist-get item :id) kept-ids))
                                             items))
               contextls--items))))

(defun contextls--merged (merged)
  "The merges of an answer, MERGED: ((ID . HOLDER) ...).
An add lists the ids it absorbed (into its item); other answers map each
absorbed id to the item that holds its text now."
  (if (vectorp merged)
      (mapcar (lambda (id) (cons id nil)) merged)
    (cl-loop for (key holder) on merged by #'cddr
             collect (cons (substring (symbol-name key) 1) holder))))

(defun contextls--evicted (root items)
  "ITEMS of ROOT went to the archive."
  (when items
    (puthash root (float-time) contextls--evicted-at)
    (contextls--forget-items root (mapcar (lambda (item) (plist-get item :id)) items))
    ;; The error face of the mode line lasts 10 s: draw it again then.
    (run-at-time 10.1 nil #'force-mode-line-update t)))

(defun contextls--evictions-message (items)
  "What to say about evicted ITEMS."
  (format "evicted %s to the archive; M-x contextls-restore brings %s back"
          (mapconcat #'contextls--describe items ", ")
          (if (cdr items) "them" "it")))

(defun contextls--take-answer (root result)
  "Take the news about the window in the answer RESULT of ROOT's server.
Its status, what it evicted, removed, added or changed: the screen shows
it at once, and the window is read again a moment later."
  (when (consp result)
    (let ((status (if (plist-member result :itemCount) result (plist-get result :status))))
      (when (and (consp status) (not (eq (plist-get result :dryRun) t)))
        (contextls--take-status root status)
        (let ((evicted (contextls--list (plist-get result :evicted))))
          (dolist (item evicted)
            (puthash (cons root (plist-get item :id)) (float-time)
                     contextls--reported-evictions))
          (contextls--evicted root evicted)
          (contextls--forget-items
           root (append (contextls--list (plist-get result :removed))
                        (contextls--list (plist-get result :clearedIds))
                        (mapcar (lambda (item) (plist-get item :id))
                                (contextls--list (plist-get result :forgotten)))
                        (mapcar #'car (contextls--merged (plist-get result :merged))))))
        ;; An add or a restore puts its items at the newest end; a pin or a
        ;; re-read changes them where they are.
        (contextls--remember-items
         root (append (and (plist-member result :deduplicated) (list (plist-get result :item)))
                      (contextls--list (plist-get result :items)))
         t)
        (contextls--remember-items
         root (append (and (not (plist-member result :deduplicated)) (plist-get result :item)
                           (list (plist-get result :item)))
                      (contextls--list (plist-get result :refreshed))))
        (contextls--window-changed root)
        (contextls--schedule-refresh root)))))

;;; Reading the window again

(defvar contextls--refreshing (make-hash-table :test #'equal)
  "Roots whose window is to be read: `scheduled', `reading' or `again'.")

(defconst contextls--refresh-delay 0.05
  "Seconds to wait before reading a window again.
A burst of changes (an answer, then its push) is read once.")

(defun contextls--schedule-refresh (root)
  "Read ROOT's window again soon, asynchronously."
  (pcase (gethash root contextls--refreshing)
    ('nil (puthash root 'scheduled contextls--refreshing)
          (run-at-time contextls--refresh-delay nil #'contextls--refresh root))
    ('reading (puthash root 'again contextls--refreshing))))

(defun contextls--refresh (root)
  "Read ROOT's window now, asynchronously; then tell every view of it."
  (let ((conn (gethash root contextls--connections)))
    (if (not (and conn (jsonrpc-running-p conn) (gethash conn contextls--ready)))
        (remhash root contextls--refreshing)
      (puthash root 'reading contextls--refreshing)
      (jsonrpc-async-request
       conn :contextls/list (contextls--workspace-params root)
       :success-fn (lambda (result)
                     (let ((again (eq (gethash root contextls--refreshing) 'again)))
                       (remhash root contextls--refreshing)
                       (puthash root (contextls--list (plist-get result :items)) contextls--items)
                       (contextls--window-changed root)
                       (when again (contextls--schedule-refresh root))))
       :error-fn (lambda (&rest _) (remhash root contextls--refreshing))
       :timeout-fn (lambda () (remhash root contextls--refreshing))))))

;;; Notifications

(defun contextls--notification (root method params)
  "Handle METHOD with PARAMS pushed by the server of ROOT."
  (pcase method
    ('contextls/didChangeStatus
     (contextls--take-status root params)
     (force-mode-line-update t)
     (contextls--schedule-refresh root))
    ('contextls/didEvict
     (let* ((items (contextls--list (plist-get params :items)))
            (untold (seq-remove
                     (lambda (item)
                       (let ((told (gethash (cons root (plist-get item :id))
                                            contextls--reported-evictions)))
                         (and told (< (- (float-time) told) 10))))
                     items)))
       (maphash (lambda (key told)
                  (when (> (- (float-time) told) 10)
                    (remhash key contextls--reported-evictions)))
                contextls--reported-evictions)
       (contextls--evicted root items)
       (contextls--window-changed root)
       (when untold
         (message "contextls: %s%s" (contextls--evictions-message untold)
                  (if (equal (plist-get params :reason) "budget")
                      " (the adaptive budget shrank)"
                    "")))))
    ('window/showMessage
     (message "%s" (plist-get params :message)))))

;;; Connections

(defun contextls--stderr-buffer (root)
  "The buffer of ROOT's server's error output."
  (get-buffer-create (format " *contextls %s stderr*" root)))

(defun contextls--stderr-tail (root)
  "The last lines the server of ROOT wrote on its error output."
  (let* ((buffer (contextls--stderr-buffer root))
         (process (get-buffer-process buffer)))
    ;; The error output comes through a pipe of its own, maybe after the exit.
    (with-timeout (1)
      (while (process-live-p process) (accept-process-output process 0.05)))
    (with-current-buffer buffer
      (let ((lines (seq-remove (lambda (line)
                                 (or (string-blank-p line)
                                     (string-match-p "\\`Process .* stderr finished\\'" line)))
                               (split-string (buffer-string) "\n"))))
        (string-join (last lines 4) "\n")))))

(defun contextls--check-program ()
  "Signal a `user-error' saying how to install the server when it is missing."
  (let ((program (car (contextls--server-command))))
    (unless (and program (or (file-executable-p program) (executable-find program)))
      (user-error "Cannot find the contextls server `%s': install it with `pip install \
contextls' (or `make setup' in its repository), or set `contextls-server-command'"
                  program))))

(defun contextls--connection (&optional root)
  "The live, initialized connection for ROOT (the current project).
Started if needed; waited for if it is starting."
  (let* ((root (or root (contextls--root)))
         (conn (gethash root contextls--connections)))
    (unless (and conn (jsonrpc-running-p conn))
      (setq conn (contextls--start root)))
    (with-timeout (30 (user-error "Contextls: the server of %s did not answer in 30 s" root))
      (while (and (jsonrpc-running-p conn) (not (gethash conn contextls--ready)))
        (accept-process-output nil 0.02)))
    (unless (jsonrpc-running-p conn)
      (contextls--died root))
    conn))

(defun contextls--died (root)
  "Signal that the server of ROOT stopped, with what it said."
  (let ((said (contextls--stderr-tail root)))
    (user-error "Contextls: the server stopped%s" (if (string-empty-p said) ""
                                                     (concat ":\n" said)))))

(defun contextls--start (root &optional in-background)
  "Start a server for ROOT and initialize it; return the connection.
With IN-BACKGROUND, return at once: it is initialized when it answers."
  (contextls--check-program)
  (let* ((name (format "contextls %s" (file-name-nondirectory root)))
         (default-directory (file-name-as-directory root))
         (stderr (contextls--stderr-buffer root))
         (conn
          (make-instance
           'jsonrpc-process-connection
           :name name
           :events-buffer-scrollback-size 0
           :process (lambda ()
                      (with-current-buffer stderr (let ((inhibit-read-only t)) (erase-buffer)))
                      (make-process
                       :name name :command (contextls--server-command)
                       :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                       :stderr stderr))
           :notification-dispatcher (lambda (_conn method params)
                                      (contextls--notification root method params))
           :request-dispatcher (lambda (_conn _method _params)
                                 (jsonrpc-error :code -32601 :message "not supported"))
           :on-shutdown (lambda (conn) (contextls--on-shutdown root conn))))
         (uri (contextls--uri root))
         (params (list :processId (emacs-pid)
                       :rootUri uri
                       :workspaceFolders (vector (list :uri uri
                                                       :name (file-name-nondirectory root)))
                       :capabilities '(:workspace (:workspaceFolders t))
                       :initializationOptions (or contextls-settings (make-hash-table)))))
    (puthash root conn contextls--connections)
    (if in-background
        (jsonrpc-async-request conn :initialize params
                               :success-fn (lambda (_) (contextls--initialized root conn))
                               :error-fn #'ignore :timeout-fn #'ignore :timeout 30)
      (condition-case nil
          (jsonrpc-request conn :initialize params :timeout 30)
        (jsonrpc-error (contextls--died root)))
      (contextls--initialized root conn))
    conn))

(defun contextls--initialized (root conn)
  "The server of ROOT answered `initialize' on CONN: say so, and open buffers."
  (puthash conn t contextls--ready)
  (jsonrpc-notify conn :initialized (make-hash-table))
  (run-hook-with-args 'contextls-connected-functions root conn))

(defun contextls--on-shutdown (root conn)
  "The server of ROOT on CONN went away: show it, unless it was asked to."
  (when (eq (gethash root contextls--connections) conn)
    (remhash root contextls--connections)
    (remhash root contextls--refreshing)
    (if (member root contextls--stopping)
        (progn (setq contextls--stopping (delete root contextls--stopping))
               (remhash root contextls--statuses))
      (puthash root 'crashed contextls--statuses))
    (run-hook-with-args 'contextls-disconnected-functions root)
    (force-mode-line-update t)))

(defun contextls--connect-in-background (root)
  "Start ROOT's server, without waiting, unless it is running.
Its status is pushed once it is initialized."
  (let ((conn (gethash root contextls--connections)))
    (unless (or (and conn (jsonrpc-running-p conn))
                (eq (gethash root contextls--statuses) 'crashed))
      (ignore-errors (contextls--start root t)))))

;;;###autoload
(defun contextls-shutdown (&optional root)
  "Stop the contextls server of this project (ROOT)."
  (interactive)
  (let* ((root (or root (contextls--root)))
         (conn (gethash root contextls--connections)))
    (when conn
      (push root contextls--stopping)
      (ignore-errors (jsonrpc-request conn :shutdown nil :timeout 5))
      (ignore-errors (jsonrpc-notify conn :exit nil))
      (with-timeout (3) (while (jsonrpc-running-p conn) (accept-process-output nil 0.05)))
      (jsonrpc-shutdown conn t)
      (contextls--on-shutdown root conn))))

;;;###autoload
(defun contextls-restart ()
  "Restart the contextls server of this project.
Buffers kept in sync with the old server are opened on the new one."
  (interactive)
  (let ((root (contextls--root)))
    (contextls-shutdown root)
    (remhash root contextls--statuses)
    (let ((conn (contextls--connection root)))
      (contextls--take-answer root (jsonrpc-request conn :contextls/status
                                                    (contextls--workspace-params root))))
    (message "contextls: restarted the server for %s" root)))

;;; Requests

(defun contextls--error-message (err)
  "The server's message in the `jsonrpc-error' ERR."
  (or (alist-get 'jsonrpc-error-message (cdr err)) (format "%s" (cadr err))))

(defun contextls--send (method params &optional root)
  "Send METHOD with PARAMS to the server of ROOT, wait, and return the result.
The answer's news (status, evictions, items) is taken first.  A refusal
signals `jsonrpc-error', with the server's code, message and data."
  (let* ((root (or root (contextls--root)))
         (conn (contextls--connection root)))
    (run-hook-with-args 'contextls-before-request-functions root)
    (condition-case err
        (let ((result (jsonrpc-request conn method params)))
          (contextls--take-answer root result)
          result)
      (jsonrpc-error
       (unless (jsonrpc-running-p conn) (contextls--died root))
       (signal (car err) (cdr err))))))

(defun contextls--request (method params &optional root)
  "Send METHOD with PARAMS to the server of ROOT and return the result.
A refusal becomes a `user-error' with the server's message."
  (condition-case err
      (contextls--send method params root)
    (jsonrpc-error (user-error "Contextls: %s" (contextls--error-message err)))))

(defun contextls--error-code (err)
  "The JSON-RPC code of the `jsonrpc-error' ERR."
  (alist-get 'jsonrpc-error-code (cdr err)))

(defun contextls--error-data (err)
  "The data of the `jsonrpc-error' ERR."
  (alist-get 'jsonrpc-error-data (cdr err)))

(provide 'contextls-client)
;;; contextls-client.el ends here
