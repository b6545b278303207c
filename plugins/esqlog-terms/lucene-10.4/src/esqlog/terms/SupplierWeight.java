package esqlog.terms;

import org.apache.lucene.search.FilterWeight;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Weight;

/**
 * A filter weight whose every scorer comes from its {@code scorerSupplier}: on Lucene 10,
 * where {@code Weight.scorer} and {@code bulkScorer} are final callers of scorerSupplier,
 * FilterWeight already is one (lucene-9.0/ routes Lucene 9's {@code scorer} there).
 */
abstract class SupplierWeight extends FilterWeight {
    protected SupplierWeight(Query query, Weight weight) {
        super(query, weight);
    }
}
