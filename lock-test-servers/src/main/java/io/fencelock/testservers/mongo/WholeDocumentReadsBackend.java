package io.fencelock.testservers.mongo;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.util.List;
import java.util.Set;

/**
 * mongo-java-server's memory backend, with reads that see whole documents, as a real {@code mongod}'s do.
 *
 * <p>The memory backend applies an update to the stored document in place, under the collection's monitor
 * (its collection methods are {@code synchronized}). An aggregate runs its stages, and every reply is encoded,
 * after that monitor is released, over the same stored documents: a read racing an update could return part
 * of the update, or fail with the server's internal error "Unknown error: null" (the document's map changing
 * under its reader). Here a command naming one collection runs under that collection's monitor, the one
 * that excludes its updates, and its reply is a deep copy made under it. {@code getMore} copies the rest of a
 * cursor the same way, so each document it returns is whole (as of the {@code getMore}).
 *
 * <p>Commands that read other collections too ({@code $lookup}, {@code $unionWith}, {@code $graphLookup},
 * {@code $out}, {@code $merge}) keep the memory backend's behaviour: holding two collections' monitors in the
 * order two commands name them could deadlock. Nothing in fencelock or the peers it is compared with sends
 * one.
 */
final class WholeDocumentReadsBackend extends MemoryBackend {
    private static final Set<String> OTHER_COLLECTION_STAGES =
            Set.of("$lookup", "$unionWith", "$graphLookup", "$out", "$merge");

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        Object collection = collectionNamedBy(databaseName, command, query);
        if (collection == null) {
            return super.handleCommand(channel, databaseName, command, query);
        }
        // the memory collection synchronizes its own methods on itself: only that monitor excludes its updates
        synchronized (collection) {
            Document reply = super.handleCommand(channel, databaseName, command, query);
            return reply == null ? null : reply.cloneDeeply();
        }
    }

    private Object collectionNamedBy(String databaseName, String command, Document query) {
        if (databaseName.equals("admin")) { // the admin commands name no collection of a user database
            return null;
        }
        Object name = command.equalsIgnoreCase("getMore") ? query.get("collection") : query.get(command);
        if (!(name instanceof String collectionName) || readsOtherCollections(command, query)) {
            return null;
        }
        return resolveDatabase(databaseName).resolveCollection(collectionName, false);
    }

    private static boolean readsOtherCollections(String command, Document query) {
        if (!command.equalsIgnoreCase("aggregate") || !(query.get("pipeline") instanceof List<?> stages)) {
            return false;
        }
        return stages.stream()
                .anyMatch(stage ->
                        stage instanceof Document d && d.keySet().stream().anyMatch(OTHER_COLLECTION_STAGES::contains));
    }
}
