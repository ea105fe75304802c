CREATE TABLE IF NOT EXISTS {share} (
    name            VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    id              VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    arrival         BIGINT       NOT NULL AUTO_INCREMENT,
    waiter          BOOLEAN      NOT NULL,
    grant_mode      VARCHAR(9)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    permits         INT          NOT NULL,
    queued          BOOLEAN      NOT NULL,
    token           BIGINT       NULL,
    token_issued_at DATETIME(6)  NULL,
    expires_at      DATETIME(6)  NOT NULL,
    granted_at      DATETIME(6)  NULL,
    lock_owner      VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    lock_type       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    lock_data       TEXT         CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    PRIMARY KEY (name, id),
    UNIQUE KEY arrival (arrival)
) ENGINE=InnoDB
//
CREATE PROCEDURE {acquire}(IN p_name VARBINARY(255), IN p_id VARBINARY(255), IN p_ttl BIGINT,
        IN p_mode VARBINARY(9), IN p_permits INT, IN p_limit INT, IN p_waiter VARBINARY(255),
        IN p_waits BOOLEAN, IN p_fair BOOLEAN, IN p_owner VARCHAR(200) CHARACTER SET utf8mb4,
        IN p_type VARCHAR(64) CHARACTER SET ascii, IN p_data TEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT '{version}'
BEGIN
    DECLARE v_now, v_exp, v_mutex_exp DATETIME(6);
    DECLARE v_mutex VARBINARY(255);
    DECLARE v_kind VARBINARY(9);
    DECLARE v_limit INT;
    DECLARE v_req VARBINARY(9) DEFAULT IF(p_mode = 'WRITE', 'READ', p_mode);
    DECLARE v_outcome CHAR(1) DEFAULT 'R';
    DECLARE v_room BOOLEAN DEFAULT FALSE;
    DECLARE v_token, v_arrival, v_remaining BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    -- record locks only (no gap locks): the name's row serializes everything of that name
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    -- the floor, then the name's row, as the mutex statement and the purge take them: a new name starts at the floor
    INSERT INTO {table} (name, lease_id, token, token_issued_at, expires_at)
        VALUES (p_name, NULL, (SELECT f.token_floor FROM {floor} f WHERE f.id = 1 LOCK IN SHARE MODE),
                UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))
        ON DUPLICATE KEY UPDATE name = name;
    SELECT lease_id, expires_at, share_kind, share_limit INTO v_mutex, v_mutex_exp, v_kind, v_limit
        FROM {table} WHERE name = p_name FOR UPDATE;
    -- read after the row lock: a waited-for lock never makes an expired grant look live
    SET v_now = UTC_TIMESTAMP(6);
    DELETE FROM {share} WHERE name = p_name AND expires_at <= v_now;
    IF v_mutex IS NOT NULL AND v_mutex_exp <= v_now THEN
        -- an expired mutex holder is no one's: clearing it stops a late renewal of it
        UPDATE {table} SET lease_id = NULL, lock_owner = NULL, lock_type = NULL, lock_data = NULL, granted_at = NULL
            WHERE name = p_name;
        SET v_mutex = NULL;
    END IF;
    IF v_mutex IS NOT NULL AND v_req <> 'EXCLUSIVE' THEN
        SET v_outcome = 'K', v_kind = 'EXCLUSIVE', v_limit = 0;
    ELSEIF v_kind IS NOT NULL AND EXISTS (SELECT 1 FROM {share} WHERE name = p_name)
            AND NOT (v_kind = v_req AND v_limit <=> p_limit) THEN
        SET v_outcome = 'K';
    ELSE
        SELECT MAX(arrival) INTO v_arrival FROM {share} WHERE name = p_name AND id = p_waiter AND waiter;
        SET v_room = v_mutex IS NULL AND CASE
            WHEN p_mode = 'PERMITS' THEN
                (SELECT COALESCE(SUM(permits), 0) FROM {share} WHERE name = p_name AND NOT waiter) + p_permits <= p_limit
            WHEN p_mode = 'READ' THEN
                NOT EXISTS (SELECT 1 FROM {share} WHERE name = p_name AND NOT waiter AND grant_mode = 'WRITE')
                -- a writer's intent holds readers back, unless it is a queue place taken after the reader's own
                AND NOT EXISTS (SELECT 1 FROM {share} WHERE name = p_name AND waiter AND grant_mode = 'WRITE'
                        AND id <> p_waiter AND NOT (queued AND v_arrival IS NOT NULL AND arrival > v_arrival))
            ELSE NOT EXISTS (SELECT 1 FROM {share} WHERE name = p_name AND NOT waiter)
        END;
        IF v_room AND p_fair THEN
            SET v_room = NOT EXISTS (SELECT 1 FROM {share} WHERE name = p_name AND waiter AND queued
                    AND id <> p_waiter AND (v_arrival IS NULL OR arrival < v_arrival));
        END IF;
        IF v_room THEN
            -- the name's one counter, shared with the mutex
            UPDATE {table} SET token = token + 1, share_kind = v_req, share_limit = p_limit WHERE name = p_name;
            SELECT token INTO v_token FROM {table} WHERE name = p_name;
            SET v_exp = v_now + INTERVAL p_ttl MICROSECOND, v_outcome = 'G';
            DELETE FROM {share} WHERE name = p_name AND id = p_waiter;
            INSERT INTO {share} (name, id, waiter, grant_mode, permits, queued, token, token_issued_at, expires_at,
                    granted_at, lock_owner, lock_type, lock_data)
                VALUES (p_name, p_id, FALSE, p_mode, p_permits, FALSE, v_token, v_now, v_exp, v_now, p_owner,
                        p_type, p_data);
        ELSEIF p_waits AND (p_mode = 'WRITE' OR p_fair) THEN
            UPDATE {table} SET share_kind = v_req, share_limit = p_limit WHERE name = p_name;
            -- a waiter coming again keeps its arrival, so its place in the queue
            INSERT INTO {share} (name, id, waiter, grant_mode, permits, queued, expires_at)
                VALUES (p_name, p_waiter, TRUE, p_mode, p_permits, p_fair, v_now + INTERVAL p_ttl MICROSECOND)
                ON DUPLICATE KEY UPDATE grant_mode = p_mode, permits = p_permits, queued = queued OR p_fair,
                    expires_at = v_now + INTERVAL p_ttl MICROSECOND;
        END IF;
        IF v_outcome = 'R' THEN
            SELECT TIMESTAMPDIFF(MICROSECOND, v_now, MIN(expires_at)) INTO v_remaining
                FROM {share} WHERE name = p_name;
            IF v_mutex IS NOT NULL THEN
                SET v_remaining = LEAST(COALESCE(v_remaining, TIMESTAMPDIFF(MICROSECOND, v_now, v_mutex_exp)),
                        TIMESTAMPDIFF(MICROSECOND, v_now, v_mutex_exp));
            END IF;
        END IF;
    END IF;
    {summary};
    COMMIT;
    SELECT v_outcome, v_token, v_exp, v_remaining, v_kind, v_limit;
END
//
CREATE PROCEDURE {downgrade}(IN p_name VARBINARY(255), IN p_id VARBINARY(255), IN p_ttl BIGINT)
    MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT '{version}'
BEGIN
    DECLARE v_now, v_exp DATETIME(6);
    DECLARE v_rows INT;
    DECLARE v_token BIGINT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    SELECT COUNT(*) INTO v_rows FROM {table} WHERE name = p_name FOR UPDATE;
    SET v_now = UTC_TIMESTAMP(6);
    -- one step: the grant stays (id, token), only its mode changes, so the name is never free
    UPDATE {share} SET grant_mode = 'READ', expires_at = v_now + INTERVAL p_ttl MICROSECOND
        WHERE name = p_name AND id = p_id AND NOT waiter AND grant_mode IN ('WRITE', 'READ') AND expires_at > v_now;
    SELECT MAX(token), MAX(expires_at) INTO v_token, v_exp FROM {share}
        WHERE name = p_name AND id = p_id AND NOT waiter AND grant_mode = 'READ' AND expires_at > v_now;
    {summary};
    COMMIT;
    SELECT v_token, v_exp;
END
//
CREATE PROCEDURE {release}(IN p_name VARBINARY(255), IN p_id VARBINARY(255))
    MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT '{version}'
BEGIN
    DECLARE v_now DATETIME(6);
    DECLARE v_rows, v_freed INT DEFAULT 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    -- a look without locks first: the release of a mutex lease ends here
    IF EXISTS (SELECT 1 FROM {share} WHERE name = p_name AND id = p_id) THEN
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION;
        SELECT COUNT(*) INTO v_rows FROM {table} WHERE name = p_name FOR UPDATE;
        SET v_now = UTC_TIMESTAMP(6);
        SELECT COUNT(*) INTO v_freed FROM {share}
            WHERE name = p_name AND id = p_id AND NOT waiter AND expires_at > v_now;
        DELETE FROM {share} WHERE name = p_name AND (id = p_id OR expires_at <= v_now);
        {summary};
        COMMIT;
    END IF;
    SELECT v_freed;
END
//
CREATE PROCEDURE {renew}(IN p_leases LONGTEXT CHARACTER SET utf8mb4)
    MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT '{version}'
BEGIN
    DECLARE v_now DATETIME(6);
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE v_name, v_id VARBINARY(255);
    DECLARE v_rows INT;
    DECLARE names CURSOR FOR SELECT DISTINCT s.name FROM {leases} STRAIGHT_JOIN {share} s
        ON s.name = j.name AND s.id = j.id ORDER BY s.name;
    DECLARE due CURSOR FOR SELECT s.name, s.id FROM {leases} STRAIGHT_JOIN {share} s
        ON s.name = j.name AND s.id = j.id
        WHERE NOT s.waiter AND s.expires_at > v_now AND j.period > 0
            AND s.token_issued_at <= v_now - INTERVAL j.period MICROSECOND;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    -- a look without locks first: a batch of mutex leases ends here
    IF EXISTS (SELECT 1 FROM {leases} STRAIGHT_JOIN {share} s ON s.name = j.name AND s.id = j.id) THEN
        SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
        START TRANSACTION;
        -- the names' rows in name order: two batches never wait for each other in a cycle
        OPEN names;
        lock_names: LOOP
            FETCH names INTO v_name;
            IF v_done THEN
                LEAVE lock_names;
            END IF;
            SELECT COUNT(*) INTO v_rows FROM {table} WHERE name = v_name FOR UPDATE;
        END LOOP;
        CLOSE names;
        SET v_now = UTC_TIMESTAMP(6), v_done = FALSE;
        -- a token as old as the period rises, from the name's counter
        OPEN due;
        rise: LOOP
            FETCH due INTO v_name, v_id;
            IF v_done THEN
                LEAVE rise;
            END IF;
            UPDATE {table} SET token = token + 1 WHERE name = v_name;
            UPDATE {share} SET token = (SELECT t.token FROM {table} t WHERE t.name = v_name), token_issued_at = v_now
                WHERE name = v_name AND id = v_id;
        END LOOP;
        CLOSE due;
        UPDATE {leases} STRAIGHT_JOIN {share} s ON s.name = j.name AND s.id = j.id
            SET s.expires_at = v_now + INTERVAL j.ttl MICROSECOND
            WHERE NOT s.waiter AND s.expires_at > v_now;
        SET v_done = FALSE;
        OPEN names;
        sum_names: LOOP
            FETCH names INTO v_name;
            IF v_done THEN
                LEAVE sum_names;
            END IF;
            {summaryOfName};
        END LOOP;
        CLOSE names;
        COMMIT;
    END IF;
    SELECT s.name, s.id, s.token, s.expires_at FROM {leases} STRAIGHT_JOIN {share} s
        ON s.name = j.name AND s.id = j.id WHERE NOT s.waiter AND s.expires_at > v_now;
END
